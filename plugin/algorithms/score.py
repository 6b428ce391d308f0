"""Processing: score a run directory against its benchmark into verdicts, tables and a report."""

from __future__ import annotations

from pathlib import Path

from qgis.core import (
    QgsProcessingOutputFile,
    QgsProcessingOutputNumber,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterFile,
    QgsProcessingParameterFolderDestination,
)

from scoring.formats.benchmark import Benchmark

from ..gui.run_choice import run_info
from ..utils.i18n import tr
from .base import FOLDER, SpatialGapAlgorithm, progress_to


class ScoreRun(SpatialGapAlgorithm):
    def name(self):
        return "scorerun"

    def displayName(self):  # noqa: N802
        return tr("Score a run")

    def shortHelpString(self):  # noqa: N802
        return tr(
            "Scores a run directory (predictions.jsonl + manifest.json) against its benchmark and "
            "writes verdicts, summary tables and an HTML report. The run is scored on the samples "
            "it answered and its coverage (answered / total) is reported, unless unanswered "
            "samples are to count as errors."
        )

    def initAlgorithm(self, config=None):  # noqa: N802
        self.addParameter(QgsProcessingParameterFile("BENCH", tr("Benchmark directory"), FOLDER))
        self.addParameter(QgsProcessingParameterFile("RUN", tr("Run directory"), FOLDER))
        self.addParameter(
            QgsProcessingParameterBoolean(
                "COUNT_UNSENT", tr("Count samples the run never answered as errors"), defaultValue=False
            )
        )
        self.addParameter(QgsProcessingParameterFolderDestination("OUTPUT", tr("Results directory")))
        self.addOutput(QgsProcessingOutputFile("REPORT", tr("HTML report")))
        self.addOutput(QgsProcessingOutputNumber("ANSWERED", tr("Samples answered")))
        self.addOutput(QgsProcessingOutputNumber("TOTAL", tr("Samples in the run's scope")))

    def process(self, parameters, context, feedback):
        # The report writer loads matplotlib and scipy: only when a run is scored.
        from scoring.score import score_runs, write_report

        bench = self.parameterAsFile(parameters, "BENCH", context)
        run = self.parameterAsFile(parameters, "RUN", context)
        out = Path(self.parameterAsString(parameters, "OUTPUT", context))
        info = run_info(Path(run), Benchmark.open(bench).all_instances())
        feedback.pushInfo(
            tr("{name}: {coverage} answered").format(name=Path(run).name, coverage=info.coverage)
        )
        count_unsent = self.parameterAsBoolean(parameters, "COUNT_UNSENT", context)
        score_runs(bench, [run], out, only_recorded=not count_unsent, progress=progress_to(feedback))
        report = write_report([out], out / "report.html")
        feedback.pushInfo(tr("Report: {path}").format(path=report))
        return {"OUTPUT": str(out), "REPORT": str(report), "ANSWERED": info.answered, "TOTAL": info.total}
