"""The words the extractor's rules look for, in English, French, German and Spanish.

Each name is a regular-expression fragment for one role in a sentence (a verb that creates a
file, one that changes it, a modal such as "must", a negation), matched case-insensitively
against a block's plain text, where words are separated by single spaces (see
`core.criteria.extract_text`). A rule composes them, so a new language is a matter of words
here, not of new rules. Every fragment is bounded: no ``*`` or ``+``.

The lists hold the forms people write in task texts — imperatives first (English "create",
French "crée"/"créez", German "erstelle", Spanish "crea"/"cree"), then infinitives and the
forms that follow a modal. Third-person forms that describe what a program does ("it writes
out.json") are not creation verbs.
"""

from __future__ import annotations

__all__ = [
    "CONTAIN",
    "COPY",
    "CREATE",
    "CREATE_SEPARABLE",
    "DEFINE",
    "EXAMPLE",
    "EXIST",
    "EXPORT",
    "FILLERS",
    "GONE",
    "AT",
    "CONVERT",
    "INTO",
    "LIVES",
    "MODAL",
    "MOVE",
    "NEGATION",
    "NEGATION_AFTER",
    "PASS",
    "RUN",
    "SPLIT",
    "STILL",
    "TO",
    "TESTS",
    "UPDATE",
    "UPDATE_SEPARABLE",
    "WORK_WITH",
    "WRITE_TESTS",
]

#: "must", and the words that say the same: the modal before a requirement's verb.
MODAL = (
    r"(?:must|should|shall|will|needs?\sto|has\sto|have\sto|is\sto|are\sto"
    r"|doit|doivent|devra|devront|devrait|devraient|il\sfaut\sque"
    r"|muss|müssen|soll|sollen|sollte|sollten|darf|dürfen"
    r"|debe|deben|debería|deberían|tiene\sque|tienen\sque|ha\sde|han\sde)"
)
#: Adverbs between a modal and its verb.
STILL = (
    r"(?:now|also|still|only|always|all|both|continue\sto|toujours|aussi|encore|tous|bien"
    r"|jetzt|auch|noch|immer|weiterhin|alle|beide|ahora|también|todavía|siempre|seguir|ambos)"
)

#: Verbs that make a new file.
CREATE = (
    r"(?:creat(?:e|ed|ing)|add(?:ed|ing)?|writ(?:e|ing)|generat(?:e|ed|ing)|scaffold"
    r"|introduc(?:e|ed)|set\sup|new|(?:need|want)s?\s(?:a|an|one)"
    r"|cré(?:e|es|ez|er|ons)|ajout(?:e|es|ez|er)|écri(?:s|vez|re)|génèr(?:e|es)|génér(?:ez|er)"
    r"|erstell(?:e|en)|schreib(?:e|en)|generier(?:e|en)|hinzufügen"
    r"|crea(?:r)?|cree|creen|añad(?:e|ir|a|an)|agreg(?:a|ar|ue|uen)|escrib(?:e|ir|a|an)"
    r"|gener(?:a|ar|e|en))"
)
#: German verbs whose particle comes after the object: "lege die Datei X an".
CREATE_SEPARABLE = r"(?:leg(?:e|en|t)(?:\ssie)?)"

#: Verbs that change a file, which must therefore still exist afterwards.
UPDATE = (
    r"(?:updat(?:e|ed|ing)|edit(?:ed|ing)?|modif(?:y|ied|ying)|chang(?:e|ed|ing)|fix(?:ed|ing)?"
    r"|refactor(?:ed|ing)?|extend|amend|adjust|patch|rewrite|tweak|rework|improve"
    r"|clean\sup|tidy\sup|bump|document|repair"
    r"|met(?:s|tez|tre)\sà\sjour|modifi(?:e|es|ez|er)|édit(?:e|es|ez|er)|chang(?:es|ez|er)"
    r"|corrig(?:e|es|ez|er)|adapt(?:e|es|ez|er)|complèt(?:e|es)|compl[ée]t(?:ez|er)|répar(?:e|ez|er)"
    r"|réécri(?:s|vez|re)"
    r"|aktualisier(?:e|en)|bearbeit(?:e|en)|änder(?:e|n)|korrigier(?:e|en)|erweiter(?:e|n)"
    r"|überarbeit(?:e|en)|verbesser(?:e|n)|beheb(?:e|en)|ergänz(?:e|en)"
    r"|actualic(?:e|en)|actualiz(?:a|ar|an)|edit(?:a|ar|e|en)|modific(?:a|ar|an)|modifique"
    r"|cambi(?:a|ar|e|en)|corrig(?:ir)|corrij(?:a|an)|ampl(?:í|i)(?:a|ar|e)|ajust(?:a|ar|e|en)"
    r"|repar(?:a|ar|e)|arregl(?:a|ar|e))"
)
#: German verbs whose particle comes after the object: "passe die README.md an".
UPDATE_SEPARABLE = r"(?:pass(?:e|en)(?:\ssie)?)"
#: Verbs that work on a file named after a short object and a preposition ("add a function
#: to utils.py", "fix the bug in pager.py"); the update verbs too.
WORK_WITH = (
    r"(?:add|append|insert|put|set|new|remove|delete|drop|get\srid\sof|ajout(?:e|es|ez|er)|mets"
    r"|mettez|supprim(?:e|ez|er)|enlève|füg(?:e|en)|setz(?:e|en)|entfern(?:e|en)|lösch(?:e|en)"
    r"|añad(?:e|ir|a)|agreg(?:a|ar)|pon|poner|elimin(?:a|ar)|quit(?:a|ar)|borr(?:a|ar))"
)
#: Verbs that turn one file into others: "split X into A and B".
SPLIT = (
    r"(?:split|divide|separate|break|divis(?:e|ez|er)|sépar(?:e|ez|er)|découp(?:e|ez|er)"
    r"|teil(?:e|en)|zerleg(?:e|en)|divid(?:e|ir|a)|separ(?:a|ar))"
)
#: Verbs saying where something belongs: "the helpers should live in X".
LIVES = (
    r"(?:live|lives|go|goes|belong|belongs|be\s(?:placed|located|put|kept|stored)"
    r"|se\strouver|va|vont|aller|gehör(?:t|en)|komm(?:t|en)|ir|van?)"
)
#: The preposition before the file worked on.
INTO = r"(?:in|inside|within|to|into|of|dans|à|au|du|des|de|im|an|zu|zur|zum|von|en|al|del)"
#: Where a new file goes: "create a helper in X", "generate a schema at X".
AT = r"(?:at|in|into|under|as|dans|sous|à|en|im|unter|als|bajo|como)"
#: Verbs that make a file from another: "convert X to Markdown as Y".
CONVERT = (
    r"(?:convert|port|migrate|translate|transform|convertis|convertissez|tradui[st]|traduisez"
    r"|konvertier(?:e|en)|wandl?e|übersetz(?:e|en)|conviert(?:e|a)|convertir|traduc(?:e|ir))"
)

MOVE = (
    r"(?:renam(?:e|ed|ing)|mov(?:e|ed|ing)"
    r"|renomm(?:e|es|ez|er)|déplac(?:e|es|ez|er)"
    r"|benenn(?:e|en)|umbenennen|verschieb(?:e|en)"
    r"|renombr(?:a|ar|e|en)|muev(?:e|a|an)|mover)"
)
COPY = (
    r"(?:cop(?:y|ied|ying)|duplicat(?:e|ed|ing)"
    r"|copi(?:e|es|ez|er)|dupliqu(?:e|es|ez|er)"
    r"|kopier(?:e|en)|duplizier(?:e|en)"
    r"|copi(?:a|ar|en)|duplic(?:a|ar|an)|duplique)"
)
#: What joins a copy's or a move's two ends: "to", "as", "into"; French "en", "vers"; German
#: "nach", "in"; Spanish "a", "como".
TO = r"(?:to|as|into|en|vers|dans|nach|in|zu|a|como|hacia|->|→|=>)"

#: The words between a verb and the path it acts on: articles, and nouns for "file".
FILLERS = (
    "a|an|the|new|empty|blank|small|simple|basic|minimal|separate|dedicated|file|files|module"
    "|modules|script|scripts|component|components|test|tests|unit|integration|config"
    "|configuration|page|pages|class|workflow|document|doc|migration|fixture|fixtures|template"
    "|stylesheet|helper|helpers|entry|point|readme|license|python|typescript|javascript|markdown"
    "|json|yaml|toml|shell|bash|react|github|actions|ci|following|called|named|at|in|under|as"
    "|existing|current|whole|entire|corresponding|both|all|each|every"
    "|modèle|modèles|vorlage|vorlagen|plantilla|plantillas"
    "|le|la|les|un|une|des|du|de|nouveau|nouvelle|fichier|fichiers|dossier|dans|sous|suivant"
    "|suivants|appelé|nommé|existant|deux|tous"
    "|die|der|das|den|dem|eine|einen|ein|neue|neuen|neues|datei|dateien|modul|skript|unter"
    "|im|nur|bestehende|vorhandene|beide|beiden|bitte"
    "|el|los|las|una|nuevo|nueva|archivo|archivos|fichero|ficheros|módulo|en|bajo|llamado"
    "|llamada|existente|solo|ambos|todos|todas"
)

#: "exists", and what says the same after a modal.
EXIST = (
    r"(?:exist|be\s(?:created|added|generated|written|present)"
    r"|exister|être\s(?:créée?|ajoutée?|présente?|générée?)"
    r"|existieren|vorhanden\ssein|(?:erstellt|angelegt)\swerden"
    r"|existir|ser\s(?:cread[oa]|añadid[oa])|estar\spresente)"
)
#: What a file must not become: a requirement that it goes away is no ``file_exists``.
GONE = (
    r"(?:be\s(?:deleted|removed|dropped|gone)|go\saway|disappear|not|never|no\slonger"
    r"|pas|plus|jamais|être\s(?:supprimée?|effacée?)"
    r"|nicht|nie|kein|keine|gelöscht|entfernt"
    r"|no|nunca|ser\s(?:eliminad[oa]|borrad[oa]))"
)

#: Verbs for content a file must hold, and for names it must export or define.
CONTAIN = (
    r"(?:contain(?:s|ing)?|includes?|mentions?|has|lists?"
    r"|conteni?r|contien(?:t|nent)|inclu(?:re|t|ent)|mentionner"
    r"|enthalten|enthält|beinhalten|beinhaltet"
    r"|contener|contiene|contienen|inclu(?:ir|ye|yen)|mencionar)"
)
EXPORT = r"(?:exports?|exporter|exporte|exportieren|exportiert|exportar|exporta)"
DEFINE = r"(?:defines?|définir|définit|definieren|definiert|definir|define)"

#: Verbs that run a quoted command.
RUN = (
    r"(?:run|runs|running|re-?runs?|re-?running|execute|executing|invoke|invoking"
    r"|exécut(?:e|es|ez|er)|lanc(?:e|es|ez|er)|relanc(?:e|es|ez|er)|fai(?:s|tes)\stourner"
    r"|führ(?:e|en)(?:\ssie)?(?:\s(?:erneut|nochmal|noch\seinmal))?|start(?:e|en)"
    r"|ejecut(?:a|ar|e|en)|corr(?:e|er|a|an)|lanz(?:a|ar)|vuelve\sa\sejecutar)"
)
#: What a command must do: pass, succeed, come back clean.
PASS = (
    r"(?:succeeds?|pass(?:es)?|exits?\s(?:with\s)?(?:code\s|status\s)?0|returns?\s0"
    r"|completes?\ssuccessfully|runs?\scleanly|(?:is|are|be|stays?)\s(?:green|clean)"
    r"|comes?\sback\sclean|works?|reports?\sno\s(?:errors?|warnings?|issues?|problems?)"
    r"|réussir|réussit|réussisse|réussissent|passer|passe|fonctionner|fonctionne|être\svert"
    r"|erfolgreich\ssein|bestehen|durchlaufen|funktionieren|grün\ssein"
    r"|funcionar|funciona|pasar|pasa|tener\séxito)"
)
#: "tests", as a subject that must pass.
TESTS = (
    r"(?:tests?|pruebas?|testfälle|(?:unit|integrations?|regressions?|komponenten|system)tests?)"
)
#: Writing tests, which the repository's own tests must then pass.
WRITE_TESTS = (
    r"(?:writ(?:e|ing)|add(?:ing)?|creat(?:e|ing)|implement(?:ing)?|provide|include"
    r"|écri(?:s|vez|re)|ajout(?:e|ez|er)|cré(?:e|ez|er)"
    r"|schreib(?:e|en)|füg(?:e|en)|erstell(?:e|en)"
    r"|escrib(?:e|ir|a)|añad(?:e|ir|a)|agreg(?:a|ar)|cre(?:a|ar|e))"
)

#: Words that negate the verb after them.
NEGATION = (
    r"(?:not|never|don't|doesn't|didn't|won't|can't|avoid|without|nothing|no\sneed\sto"
    r"|ne|n'|sans|jamais|rien"
    r"|nicht|nie|niemals|ohne|nichts|kein|keine"
    r"|no|nunca|sin|nada)"
)
#: Words after a German verb's object that negate it: "ändere X nicht".
NEGATION_AFTER = r"(?:nicht|nie|niemals|keinesfalls|auf\skeinen\sfall|not)"
#: Words that introduce an example or an aside: a file named after them asks for nothing.
EXAMPLE = (
    r"(?:e\.\s?g\.|i\.\s?e\.|for\s(?:example|instance)|such\sas|like|say"
    r"|par\sexemple|p\.\s?ex\.|c\.-à-d\.|comme|tel\sque|telle\sque"
    r"|z\.\s?b\.|d\.\s?h\.|bspw\.|beispielsweise|etwa|wie"
    r"|por\sejemplo|p\.\s?ej\.|es\sdecir|como|tal\scomo)"
)
