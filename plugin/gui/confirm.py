"""The question asked before more than one instance goes to a model: how many requests, and what
they are estimated to cost (a paid API bills every one)."""

from __future__ import annotations

from qgis.PyQt.QtWidgets import QMessageBox

from scoring.evaluate.estimate import request_cost
from scoring.formats.records import Instance
from scoring.vocab import Form, Task

from ..utils.i18n import number, tr


def estimate_text(instances: list[Instance], endpoint, modality: str, qa_form: str) -> str:
    """ "about 12,345 tokens in, at most 1,545 × 1,024 out; estimated cost 0.42" (or "no price set")."""
    spec = endpoint.spec()
    cap = spec.max_tokens if spec.max_tokens is not None else spec.max_completion_tokens

    def form_of(inst: Instance) -> str:
        return qa_form if inst.get("task") == Task.QA else Form.EDIT.value

    requests, tokens, cost = request_cost(
        instances, str(modality), form_of, spec.price_in, spec.price_out, cap
    )
    out = tr("at most {cap} tokens out a request").format(cap=number(cap)) if cap else tr("no output cap")
    text = tr("{requests} requests, about {tokens} tokens in, {out}").format(
        requests=number(requests), tokens=number(tokens), out=out
    )
    if cost is None:
        return text + "\n" + tr("Estimated cost: unknown (no price set for this endpoint in Endpoints…)")
    return (
        text
        + "\n"
        + tr("Estimated cost: at most {cost} (the endpoint's price per million tokens)").format(
            cost=number(cost, 2)
        )
    )


class SendConfirmation(QMessageBox):
    """Send or Cancel, Cancel by default."""

    def __init__(self, count: int, estimate: str, endpoint_name: str, parent=None):
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Question)
        self.setWindowTitle(tr("Spatial Gap"))
        self.setText(tr("Send {n} instances to {endpoint}?").format(n=number(count), endpoint=endpoint_name))
        self.setInformativeText(estimate)
        self.send_button = self.addButton(
            tr("Send {n}").format(n=number(count)), QMessageBox.ButtonRole.AcceptRole
        )
        cancel = self.addButton(QMessageBox.StandardButton.Cancel)
        self.setDefaultButton(cancel)

    def confirmed(self) -> bool:
        self.exec()
        return self.clickedButton() is self.send_button
