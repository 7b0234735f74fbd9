"""The rest of what is on file: the everyday work notes that make each chain a few hundred
rows, as a real one is, around the facts the questions ask about.

An agent that has worked for someone for months keeps far more than the forty-odd facts
people.py holds about each person: tickets it followed, answers it promised, documents it
drafted. Teams and tenants keep their services, customers, incidents and suppliers. None of
it says anything about the person (no preference, health, family, tool they use, place,
birthday, name of a relative, habit or constraint), so it answers no question of
questions.py and no off-topic one; it is there to be in the way, lexically and by meaning,
as the rest of a real chain is.

It is generated, deterministically, from small tables of each tenant's customers, topics and
documents in the four languages, so that every chain holds at least 300 live rows
(tests/test_recall_generalise_data.py checks it): per person NOTES_PER_PERSON notes at
their own scope, a third of them in their first language (or all in English); per team
NOTES_PER_TEAM; per tenant NOTES_PER_TENANT; GLOBAL_NOTES at `global`. It was added long
after the split was made, and it changes no question and no fact. Its first draft, run on
DEV only, had one template make up a third of the wider scopes' notes; it was given more
kinds of note before TEST was run (docs/agents/recall.md).
"""

import random
from typing import NamedTuple

from tests.recall.generalise.people import PEOPLE, TEAMS, TENANTS, Fact, ScopedFact

NOTE = "note"  # the kind of every background row
NOTES_PER_PERSON = 90
NOTES_PER_TEAM = 70
NOTES_PER_TENANT = 60
GLOBAL_NOTES = 20
SEED = 20261204


class Topic(NamedTuple):
    slug: str
    en: str
    pt: str
    es: str
    de: str


# What each tenant's work is about, in the four languages.
_TOPICS = {
    "brightwater": (
        Topic(
            "refund",
            "duplicated refund",
            "reembolso duplicado",
            "reembolso duplicado",
            "doppelte Erstattung",
        ),
        Topic(
            "settlement",
            "late settlement file",
            "ficheiro de liquidação atrasado",
            "fichero de liquidación retrasado",
            "verspätete Abrechnungsdatei",
        ),
        Topic(
            "rates",
            "carrier rate import",
            "importação de tarifas da transportadora",
            "importación de tarifas del transportista",
            "Import der Frachttarife",
        ),
        Topic(
            "rounding",
            "invoice rounding error",
            "erro de arredondamento na fatura",
            "error de redondeo en la factura",
            "Rundungsfehler in der Rechnung",
        ),
        Topic(
            "webhooks",
            "webhook retries",
            "reenvio de webhooks",
            "reintentos de webhooks",
            "Webhook-Wiederholungen",
        ),
        Topic(
            "ratelimit",
            "API rate limit",
            "limite de pedidos da API",
            "límite de peticiones de la API",
            "API-Ratenlimit",
        ),
        Topic(
            "currency",
            "currency conversion on invoices",
            "conversão de moeda nas faturas",
            "conversión de divisas en las facturas",
            "Währungsumrechnung auf Rechnungen",
        ),
        Topic(
            "pod",
            "missing proof of delivery",
            "comprovativo de entrega em falta",
            "prueba de entrega que falta",
            "fehlender Liefernachweis",
        ),
        Topic(
            "chargeback",
            "chargeback dispute",
            "contestação de estorno",
            "disputa de contracargo",
            "Rückbuchungsstreit",
        ),
        Topic(
            "mandate",
            "rejected direct debit mandate",
            "mandato de débito direto rejeitado",
            "mandato de domiciliación rechazado",
            "abgelehntes Lastschriftmandat",
        ),
        Topic(
            "tariffs",
            "tariff table upload",
            "carregamento da tabela de tarifas",
            "carga de la tabla de tarifas",
            "Hochladen der Tariftabelle",
        ),
        Topic(
            "creditnotes",
            "credit note numbering",
            "numeração das notas de crédito",
            "numeración de las notas de crédito",
            "Nummerierung der Gutschriften",
        ),
        Topic(
            "customs",
            "customs declaration export",
            "exportação da declaração aduaneira",
            "exportación de la declaración aduanera",
            "Export der Zollanmeldung",
        ),
        Topic(
            "fuel",
            "fuel surcharge calculation",
            "cálculo da sobretaxa de combustível",
            "cálculo del recargo por combustible",
            "Berechnung des Treibstoffzuschlags",
        ),
    ),
    "lumen": (
        Topic(
            "treadmill",
            "treadmill maintenance",
            "manutenção da passadeira",
            "mantenimiento de la cinta de correr",
            "Wartung des Laufbands",
        ),
        Topic(
            "insurer",
            "insurer agreement renewal",
            "renovação do acordo com a seguradora",
            "renovación del acuerdo con la aseguradora",
            "Verlängerung des Versicherervertrags",
        ),
        Topic(
            "ethics",
            "ethics committee amendment",
            "emenda à comissão de ética",
            "enmienda al comité de ética",
            "Änderungsantrag an die Ethikkommission",
        ),
        Topic(
            "consent",
            "consent form translation",
            "tradução do formulário de consentimento",
            "traducción del formulario de consentimiento",
            "Übersetzung der Einwilligungserklärung",
        ),
        Topic(
            "rooms",
            "treatment room double booking",
            "marcação dupla de gabinete",
            "doble reserva de sala de tratamiento",
            "Doppelbuchung eines Behandlungsraums",
        ),
        Topic(
            "supplierinv",
            "supplier invoice query",
            "dúvida sobre fatura de fornecedor",
            "consulta sobre factura de proveedor",
            "Rückfrage zu einer Lieferantenrechnung",
        ),
        Topic(
            "gel",
            "ultrasound gel order",
            "encomenda de gel de ultrassom",
            "pedido de gel de ultrasonido",
            "Bestellung von Ultraschallgel",
        ),
        Topic(
            "export",
            "study data export",
            "exportação de dados do estudo",
            "exportación de datos del estudio",
            "Export der Studiendaten",
        ),
        Topic(
            "rota",
            "staff rota template",
            "modelo de escala do pessoal",
            "plantilla de turnos del personal",
            "Vorlage für den Dienstplan",
        ),
        Topic(
            "sensors",
            "gait sensor calibration",
            "calibração dos sensores de marcha",
            "calibración de los sensores de marcha",
            "Kalibrierung der Gangsensoren",
        ),
        Topic(
            "referrals",
            "referral letters backlog",
            "atraso nas cartas de referenciação",
            "retraso en las cartas de derivación",
            "Rückstand bei Überweisungsschreiben",
        ),
        Topic(
            "billing",
            "session billing codes",
            "códigos de faturação das sessões",
            "códigos de facturación de las sesiones",
            "Abrechnungscodes der Sitzungen",
        ),
        Topic(
            "recruitment",
            "study recruitment numbers",
            "números de recrutamento do estudo",
            "cifras de reclutamiento del estudio",
            "Rekrutierungszahlen der Studie",
        ),
        Topic(
            "linen",
            "linen service contract",
            "contrato do serviço de lavandaria",
            "contrato del servicio de lavandería",
            "Vertrag mit der Wäscherei",
        ),
    ),
}

# Customers (Brightwater) and clinics, partners and suppliers (Lumen).
_PARTIES = {
    "brightwater": (
        "Kestrel Foods",
        "Norte Logística",
        "Transportes Almeida",
        "Hafenkontor Bremen",
        "Iberia Cargo Link",
        "Northwind Haulage",
        "Atlas Reefer",
        "Duna Transportes",
        "Rheinfracht",
        "Blue Anchor Shipping",
        "Vela Frete",
        "Costa Carga",
        "Tejo Express",
        "Baltic Pallets",
    ),
    "lumen": (
        "Boavista clinic",
        "Matosinhos clinic",
        "Braga clinic",
        "Guimarães clinic",
        "Viana clinic",
        "OrtoMed",
        "Fisiolab",
        "MoviTec",
        "Seguros Atlântico",
        "Medis Norte",
        "University of Vienna",
        "Hospital de Santo António",
        "LavaPro",
        "Sonomed",
    ),
}

_DOCS = ("spec", "runbook", "checklist", "proposal", "summary", "timeline", "FAQ", "report")
_DOCS_PT = ("especificação", "lista de verificação", "proposta", "nota técnica", "apresentação")
_DOCS_ES = ("especificación", "guía", "lista de comprobación", "propuesta", "nota técnica")
_DOCS_DE = ("Spezifikation", "Anleitung", "Checkliste", "Angebot", "Zusammenfassung", "Zeitplan")
_MONTHS = {
    "en": (
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ),
    "pt": (
        "janeiro",
        "fevereiro",
        "março",
        "abril",
        "maio",
        "junho",
        "julho",
        "agosto",
        "setembro",
        "outubro",
        "novembro",
        "dezembro",
    ),
    "es": (
        "enero",
        "febrero",
        "marzo",
        "abril",
        "mayo",
        "junio",
        "julio",
        "agosto",
        "septiembre",
        "octubre",
        "noviembre",
        "diciembre",
    ),
    "de": (
        "Januar",
        "Februar",
        "März",
        "April",
        "Mai",
        "Juni",
        "Juli",
        "August",
        "September",
        "Oktober",
        "November",
        "Dezember",
    ),
}


def _date(rng: random.Random, lang: str) -> str:
    day, month = rng.randint(1, 28), _MONTHS[lang][rng.randrange(12)]
    return {"en": f"{day} {month}", "pt": f"{day} de {month}", "es": f"{day} de {month}"}.get(
        lang, f"{day}. {month}"
    )


def _ticket(rng: random.Random, prefix: str) -> str:
    return f"{prefix}-{rng.randint(1000, 9899)}"


# A person's notes: lang -> (key word, template). Fields: ticket, topic, party, doc, date, n.
_PERSONAL = {
    "en": (
        ("ticket", "ticket {ticket}: {topic} for {party}; waiting on the other side since {date}"),
        ("followup", "promised {party} an answer on the {topic} by {date}"),
        ("draft", "drafted the {doc} on the {topic}; it still needs a second reviewer"),
        ("closed", "the {topic} reported by {party} was closed on {date} after a fix"),
        ("examples", "{party} sent {n} examples of the {topic}; three are still unexplained"),
        ("call", "call with {party} about the {topic} moved to {date}"),
        (
            "meeting",
            "notes from the meeting with {party} on {date}: the {topic} waits for the next release",
        ),
        ("estimate", "estimated {n} hours for the {topic} fix; {party} agreed to the plan"),
        ("reminder", "reminder: send {party} the {doc} on the {topic} before {date}"),
        ("decision", "{party} chose to wait for the {topic} fix rather than take a workaround"),
        ("handover", "handed the {topic} for {party} over to a colleague on {date}"),
    ),
    "pt": (
        ("ticket", "pedido {ticket}: {topic} da {party}; à espera de resposta desde {date}"),
        ("followup", "prometeu à {party} uma resposta sobre {topic} até {date}"),
        ("draft", "rascunho da {doc} sobre {topic} pronto; falta uma segunda revisão"),
        ("closed", "o caso de {topic} da {party} foi fechado a {date}"),
        ("meeting", "reunião com a {party} a {date}: {topic} fica para a próxima versão"),
        ("estimate", "estimou {n} horas para corrigir {topic}; a {party} aceitou o plano"),
        ("reminder", "lembrete: enviar à {party} a {doc} sobre {topic} antes de {date}"),
    ),
    "es": (
        (
            "ticket",
            "incidencia {ticket}: {topic} de {party}; pendiente de respuesta desde el {date}",
        ),
        ("followup", "prometió a {party} una respuesta sobre {topic} antes del {date}"),
        ("draft", "borrador de la {doc} sobre {topic} listo; falta una segunda revisión"),
        ("closed", "el caso de {topic} de {party} se cerró el {date}"),
        ("meeting", "reunión con {party} el {date}: {topic} queda para la próxima versión"),
        ("estimate", "calculó {n} horas para arreglar {topic}; {party} aceptó el plan"),
        ("reminder", "recordatorio: enviar a {party} la {doc} sobre {topic} antes del {date}"),
    ),
    "de": (
        ("ticket", "Ticket {ticket}: {topic} bei {party}; wartet seit {date} auf Antwort"),
        ("followup", "hat {party} bis {date} eine Antwort zu {topic} zugesagt"),
        ("draft", "Entwurf ({doc}) zu {topic} fertig; eine zweite Durchsicht fehlt noch"),
        ("closed", "der Fall {topic} von {party} wurde am {date} geschlossen"),
        ("meeting", "Besprechung mit {party} am {date}: {topic} kommt in die nächste Version"),
        (
            "estimate",
            "hat {n} Stunden für die Behebung von {topic} geschätzt; {party} ist einverstanden",
        ),
        ("reminder", "Erinnerung: {party} vor dem {date} die {doc} zu {topic} schicken"),
    ),
}

# A team's or a tenant's: customers, incidents and how work is routed, mostly in English.
_SHARED = {
    "en": (
        (
            "incident",
            "incident {ticket} on {date}: {topic} for {party}; the postmortem is in the wiki",
        ),
        ("account", "{party} is on the {plan} plan; the contract renews on {date}"),
        ("board", "the {topic} is tracked on the shared board, column {n}"),
        ("inbox", "questions from {party} about the {topic} go to the shared inbox first"),
        ("report", "{party} asked for a monthly summary of the {topic}"),
        ("sla", "{party} has a {n}-hour response time for anything about the {topic}"),
        (
            "known_issue",
            "known issue: the {topic} fails for {party} when a file has more than {n} lines",
        ),
        ("runbook", "the runbook for the {topic} was last reviewed on {date}"),
        (
            "contact",
            "the contact at {party} for the {topic} changed on {date}; the new one is in the CRM",
        ),
        ("metric", "{n} cases of the {topic} were logged last month, most of them from {party}"),
    ),
    "pt": (
        ("incident", "incidente {ticket} a {date}: {topic} na {party}; a análise está na wiki"),
        ("inbox", "as dúvidas da {party} sobre {topic} vão primeiro para a caixa partilhada"),
        (
            "known_issue",
            "problema conhecido: {topic} falha na {party} com ficheiros de mais de {n} linhas",
        ),
        ("runbook", "o procedimento para {topic} foi revisto a {date}"),
        ("metric", "{n} casos de {topic} no mês passado, a maioria da {party}"),
    ),
    "es": (
        (
            "incident",
            "incidente {ticket} el {date}: {topic} en {party}; el análisis está en la wiki",
        ),
        ("inbox", "las dudas de {party} sobre {topic} van primero al buzón compartido"),
        (
            "known_issue",
            "problema conocido: {topic} falla en {party} con ficheros de más de {n} líneas",
        ),
        ("runbook", "el procedimiento para {topic} se revisó el {date}"),
        ("metric", "{n} casos de {topic} el mes pasado, la mayoría de {party}"),
    ),
    "de": (
        (
            "incident",
            "Störung {ticket} am {date}: {topic} bei {party}; die Nachbetrachtung steht im Wiki",
        ),
        ("inbox", "Fragen von {party} zu {topic} gehen zuerst an das gemeinsame Postfach"),
        (
            "known_issue",
            "bekanntes Problem: {topic} scheitert bei {party} an Dateien mit mehr als {n} Zeilen",
        ),
        ("runbook", "die Anleitung für {topic} wurde am {date} überprüft"),
        ("metric", "{n} Fälle von {topic} im letzten Monat, die meisten von {party}"),
    ),
}
_PLANS = ("standard", "premium", "enterprise", "pilot")
_GLOBAL = (
    "the fiscal year runs from 1 January to 31 December",
    "every service keeps its application logs for 30 days",
    "customer data is stored in the EU region only",
    "the status page is updated within 15 minutes of an incident starting",
    "backups are restored in a drill every six weeks",
    "security patches rated critical are applied within 72 hours",
    "contracts above 50,000 euros need a second signature",
    "invoices are archived for ten years",
    "passwords for shared accounts live in the company vault, never in chat",
    "each product area keeps a public changelog",
    "access reviews for production systems happen every quarter",
    "suppliers must sign the data processing agreement before any data is shared",
    "the incident severity scale runs from SEV1 (worst) to SEV4",
    "architecture decisions are recorded as numbered ADRs in each repository",
    "public holidays follow the calendar of the office a person is attached to",
    "expense claims are filed within 60 days of the expense",
    "a postmortem is written for every SEV1 and SEV2 incident, without blame",
    "the company newsletter goes out on the first Friday of the month",
    "new services need an owner team and an on-call rotation before launch",
    "personal data found in logs is reported to the privacy office the same day",
)


def _fields(rng: random.Random, tenant: str, lang: str, prefix: str) -> dict:
    topic = rng.choice(_TOPICS[tenant])
    docs = {"en": _DOCS, "pt": _DOCS_PT, "es": _DOCS_ES, "de": _DOCS_DE}[lang]
    return {
        "ticket": _ticket(rng, prefix),
        "topic": getattr(topic, lang),
        "slug": topic.slug,
        "party": rng.choice(_PARTIES[tenant]),
        "doc": rng.choice(docs),
        "date": _date(rng, lang),
        "n": rng.randint(2, 40),
        "plan": rng.choice(_PLANS),
    }


def _notes(rng, tenant, languages, count, templates, prefix) -> list[tuple]:
    """`count` (key, lang, text) rows, keys unique."""
    rows, keys = [], set()
    while len(rows) < count:
        lang = rng.choice(languages)
        word, template = rng.choice(templates[lang])
        fields = _fields(rng, tenant, lang, prefix)
        key = f"{word}.{fields['slug']}-{fields['ticket'].lower()}"
        if key in keys:
            continue
        keys.add(key)
        rows.append((key, lang, template.format(**fields)))
    return rows


def _build():
    rng = random.Random(SEED)
    personal: dict[str, tuple[Fact, ...]] = {}
    for ref, person in PEOPLE.items():
        # A third in the person's first language, the rest in English.
        languages = ["en", "en", person.language] if person.language != "en" else ["en"]
        prefix = ("BW" if person.tenant == "brightwater" else "LU") + ref[:2].upper()
        rows = _notes(rng, person.tenant, languages, NOTES_PER_PERSON, _PERSONAL, prefix)
        personal[ref] = tuple(Fact(key, NOTE, lang, text) for key, lang, text in rows)
    scoped: list[ScopedFact] = []
    tenant_languages = {"brightwater": ["en", "en", "pt", "es", "de"], "lumen": ["en", "pt", "de"]}
    for scope in TEAMS:
        tenant = scope.split(":", 1)[1].split("/", 1)[0]
        prefix = scope.rsplit("/", 1)[1][:3].upper()
        for key, lang, text in _notes(
            rng, tenant, tenant_languages[tenant], NOTES_PER_TEAM, _SHARED, prefix
        ):
            scoped.append(ScopedFact(scope, key, NOTE, lang, text))
    for tenant in TENANTS:
        for key, lang, text in _notes(
            rng, tenant, tenant_languages[tenant], NOTES_PER_TENANT, _SHARED, "ORG"
        ):
            scoped.append(ScopedFact(f"tenant:{tenant}", key, NOTE, lang, text))
    for number, text in enumerate(_GLOBAL[:GLOBAL_NOTES]):
        scoped.append(ScopedFact("global", f"practice.{number:02d}", NOTE, "en", text))
    return personal, tuple(scoped)


# person -> their background notes (at their own scope); the wider scopes' background.
PERSONAL_NOTES, SCOPED_NOTES = _build()
