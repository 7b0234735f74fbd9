"""The world of the held-out recall set: who the people are and what is on file about them.

Two tenants, each with two teams:

- tenant `brightwater` (Brightwater, freight software; offices in Lisbon, Madrid, Berlin and
  London): team `payments` (marta, javier, tom) and team `platform` (jonas, amara).
- tenant `lumen` (Lumen, physiotherapy clinics in the north of Portugal with a research unit
  in Vienna): team `clinic-ops` (ines, sofia) and team `research` (klara, sofia).

FACTS maps each person to {key: fact}; FACT_RECORDS holds the same facts with their kind and
language. Within one person, no two facts answer the same question. SCOPED_FACTS are the
wider-scope distractors: team facts, tenant policies (some pinned) and global facts, each
noting the personal keys it shares (`same_key_as`, so precedence decides) and the personal
facts it is worded like (`resembles`, often another person's).
"""

import re
from typing import NamedTuple

KEY_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
FACT_MAX_CHARS = 240

PREFERENCE = "preference"
HEALTH = "health"
FAMILY = "family"
WORK = "work"  # the job, projects and reporting lines
TOOL = "tool"
PLACE = "place"
DATE_NUMBER = "date_number"
NAME = "name"
HABIT = "habit"
CONSTRAINT = "constraint"
KINDS = (PREFERENCE, HEALTH, FAMILY, WORK, TOOL, PLACE, DATE_NUMBER, NAME, HABIT, CONSTRAINT)
# Wider-scope facts may also be plain policies.
POLICY = "policy"

LANGUAGES = ("en", "pt", "es", "de")


class Person(NamedTuple):
    ref: str
    name: str
    pronoun: str  # "she" or "he": how questions refer to the person
    tenant: str
    teams: tuple[str, ...]  # team names inside the tenant, in membership order
    language: str  # first language

    @property
    def actor_scope(self) -> str:
        return f"actor:{self.tenant}/{self.ref}"

    @property
    def memberships(self) -> tuple[str, ...]:
        """The scopes the actor is a member of, nearest first (its own scope and `global` are
        implied)."""
        return (*(f"team:{self.tenant}/{team}" for team in self.teams), f"tenant:{self.tenant}")

    @property
    def chain(self) -> tuple[str, ...]:
        """Every scope whose memories the person's searches see, nearest first."""
        return (self.actor_scope, *self.memberships, "global")


class Fact(NamedTuple):
    key: str
    kind: str
    lang: str
    text: str


class ScopedFact(NamedTuple):
    scope: str  # team:<tenant>/<team>, tenant:<tenant> or global
    key: str
    kind: str
    lang: str
    text: str
    pinned: bool = False
    same_key_as: tuple[str, ...] = ()  # "person/key": personal facts on the same key
    resembles: tuple[str, ...] = ()  # "person/key": personal facts worded like this one


TENANTS = {"brightwater": "Brightwater", "lumen": "Lumen"}
TEAMS = {
    "team:brightwater/payments": "Payments",
    "team:brightwater/platform": "Platform",
    "team:lumen/clinic-ops": "Clinic operations",
    "team:lumen/research": "Research",
}

PEOPLE = {
    "marta": Person("marta", "Marta Oliveira Santos", "she", "brightwater", ("payments",), "pt"),
    "javier": Person("javier", "Javier Ruiz Peña", "he", "brightwater", ("payments",), "es"),
    "tom": Person("tom", "Tom Gallagher", "he", "brightwater", ("payments",), "en"),
    "jonas": Person("jonas", "Jonas Müller", "he", "brightwater", ("platform",), "de"),
    "amara": Person("amara", "Amara Okafor", "she", "brightwater", ("platform",), "en"),
    "ines": Person("ines", "Inês Carvalho", "she", "lumen", ("clinic-ops",), "pt"),
    "sofia": Person(
        "sofia", "Sofía Herrera Castañeda", "she", "lumen", ("clinic-ops", "research"), "es"
    ),
    "klara": Person("klara", "Klara Schmidt", "she", "lumen", ("research",), "de"),
}

_MARTA = (
    (PREFERENCE, "coffee", "pt", "prefere café coado, sem açúcar; acha café de cápsula sem graça"),
    (PREFERENCE, "music", "pt", "ouve MPB e samba antigo, sobretudo Cartola e Clara Nunes"),
    (
        PREFERENCE,
        "feedback",
        "pt",
        "quer críticas diretas, numa conversa a dois, nunca diante do time",
    ),
    (PREFERENCE, "desk", "en", "likes a desk by the window, as far from the kitchen as possible"),
    (PREFERENCE, "series", "pt", "adora séries policiais escandinavas"),
    (HEALTH, "drug_allergy", "pt", "alérgica a dipirona (metamizol); já teve uma reação grave"),
    (HEALTH, "migraine", "pt", "tem enxaqueca com aura; luz forte e telas claras pioram as crises"),
    (HEALTH, "contacts", "pt", "usa lentes de contato durante o dia e óculos só à noite"),
    (HEALTH, "coeliac", "pt", "é celíaca e não pode comer nada com glúten"),
    (FAMILY, "husband", "pt", "casada com Rafael, que dá aulas de história numa escola pública"),
    (FAMILY, "son", "pt", "tem um filho, o Theo, de 4 anos"),
    (FAMILY, "mother", "pt", "a mae mora em Sao Paulo, no bairro da Mooca"),
    (FAMILY, "sister", "pt", "tem uma irmã gêmea, Juliana, dentista em Curitiba"),
    (WORK, "role", "pt", "desenvolvedora backend sênior no time de pagamentos"),
    (WORK, "manager", "en", "reports to Tom Gallagher, who leads payments"),
    (WORK, "project", "pt", "está migrando a conciliação bancária para o novo motor de regras"),
    (WORK, "on_call", "pt", "fica de sobreaviso uma semana a cada cinco"),
    (
        WORK,
        "previous_job",
        "pt",
        "trabalhou seis anos no Nubank, em São Paulo, antes de se mudar para Portugal",
    ),
    (TOOL, "ide", "pt", "programa no IntelliJ IDEA, sempre com o tema escuro"),
    (TOOL, "languages", "en", "writes Kotlin for services and Python for one-off scripts"),
    (TOOL, "notes", "pt", "organiza anotações e tarefas no Obsidian"),
    (TOOL, "keyboard", "en", "types on a split ergonomic keyboard, a ZSA Moonlander"),
    (PLACE, "home", "pt", "mora em Oeiras, perto da praia de Santo Amaro"),
    (PLACE, "office", "pt", "o escritório dela é o de Lisboa, na Avenida da Liberdade"),
    (PLACE, "hometown", "en", "grew up in Campinas, in the interior of São Paulo state"),
    (
        PLACE,
        "holiday_spot",
        "pt",
        "passa as férias em Ubatuba, no litoral paulista, todo mês de janeiro",
    ),
    (DATE_NUMBER, "birthday", "pt", "faz aniversário em 2 de setembro"),
    (DATE_NUMBER, "start_date", "en", "joined Brightwater on 10 January 2022"),
    (DATE_NUMBER, "shoe_size", "pt", "calça 37"),
    (DATE_NUMBER, "badge", "en", "her badge number is 4417"),
    (NAME, "nickname", "pt", "todo mundo a chama de Tata"),
    (NAME, "cat", "pt", "a gata se chama Paçoca"),
    (NAME, "sourdough", "en", "named her sourdough starter 'Dona Benta'"),
    (NAME, "doctor", "pt", "o médico de família dela é o Dr. Henrique Lobo"),
    (HABIT, "running", "pt", "corre 5 km na beira-mar antes do expediente"),
    (HABIT, "lunch", "pt", "almoça cedo, por volta das 11h30"),
    (HABIT, "book_club", "en", "reads one novel a month for a Portuguese-language book club"),
    (HABIT, "bedtime", "pt", "dorme tarde, quase nunca antes da uma da manhã"),
    (CONSTRAINT, "pickup", "pt", "precisa sair às 17h para buscar o filho na creche"),
    (
        CONSTRAINT,
        "travel",
        "en",
        "cannot travel outside Portugal until her residence card is renewed",
    ),
    (CONSTRAINT, "sunday", "pt", "não responde mensagens de trabalho aos domingos"),
    (
        CONSTRAINT,
        "conference_budget",
        "en",
        "her conference budget is capped at 1,500 euros a year",
    ),
)

_JAVIER = (
    (PREFERENCE, "coffee", "es", "se toma un cortado bien cargado a media mañana"),
    (PREFERENCE, "football_club", "es", "es del Valencia CF de toda la vida"),
    (
        PREFERENCE,
        "favourite_dish",
        "es",
        "su plato favorito es la paella de su abuela, con garrofó",
    ),
    (
        PREFERENCE,
        "holiday_style",
        "es",
        "prefiere vacaciones de playa tranquila; las ciudades le agobian",
    ),
    (PREFERENCE, "communication", "en", "prefers a quick Slack huddle to a long email thread"),
    (
        HEALTH,
        "knee",
        "es",
        "se rompió el ligamento cruzado de la rodilla derecha jugando al pádel",
    ),
    (HEALTH, "lactose", "es", "es intolerante a la lactosa"),
    (HEALTH, "asthma", "es", "tiene asma leve y lleva siempre el inhalador encima"),
    (HEALTH, "insomnia", "es", "sufre insomnio en las semanas de cierre trimestral"),
    (FAMILY, "partner", "es", "vive con su pareja, Lucía, que es arquitecta"),
    (FAMILY, "parents", "es", "sus padres tienen una huerta de naranjos en Alzira"),
    (FAMILY, "siblings", "es", "es el mayor de cuatro hermanos"),
    (FAMILY, "goddaughter", "en", "is godfather to his niece Carmen"),
    (WORK, "role", "es", "analista de datos en el equipo de pagos"),
    (WORK, "manager", "es", "su responsable directo es Tom Gallagher"),
    (
        WORK,
        "fraud_report",
        "en",
        "is responsible for the weekly fraud-rate report sent to finance",
    ),
    (WORK, "mentoring", "en", "mentors Marta Oliveira on SQL performance"),
    (WORK, "hours", "es", "entra a las ocho de la manana y en julio y agosto sale a las tres"),
    (TOOL, "sql_client", "es", "escribe sus consultas en DBeaver contra la réplica de lectura"),
    (TOOL, "spreadsheet", "en", "keeps a personal Excel workbook for quarter-end checks"),
    (TOOL, "phone", "es", "usa un Pixel 8 como teléfono del trabajo"),
    (TOOL, "bi_tool", "en", "builds his dashboards in Metabase"),
    (PLACE, "home", "es", "vive en Madrid, en el barrio de Lavapiés"),
    (PLACE, "hometown", "es", "es de Valencia, del barrio del Cabanyal"),
    (PLACE, "office", "es", "trabaja desde la oficina de Madrid, junto al Retiro"),
    (PLACE, "getaway", "en", "spends long weekends at a village house in Teruel"),
    (DATE_NUMBER, "birthday", "es", "cumple años el 19 de marzo, por San José"),
    (DATE_NUMBER, "tshirt_size", "es", "usa talla L de camiseta"),
    (DATE_NUMBER, "tenure", "es", "lleva tres años y medio en la empresa"),
    (DATE_NUMBER, "marathon", "es", "corrió el maratón de Valencia en 3 horas y 52 minutos"),
    (NAME, "nickname", "es", "sus amigos le llaman Javi"),
    (NAME, "dog", "es", "tiene una galga adoptada que se llama Trufa"),
    (NAME, "bike", "en", "named his road bike 'La Flaca'"),
    (NAME, "podcast", "es", "presenta un pequeño podcast llamado 'Datos con Sal'"),
    (HABIT, "nap", "es", "echa una siesta de veinte minutos los fines de semana"),
    (HABIT, "swimming", "es", "nada en la piscina municipal los martes y jueves a las siete"),
    (HABIT, "audiobooks", "en", "listens to audiobooks on the metro"),
    (HABIT, "dinner", "es", "cena tarde, nunca antes de las diez de la noche"),
    (
        CONSTRAINT,
        "quarter_end",
        "es",
        "no puede viajar la última semana de cada trimestre por el cierre",
    ),
    (CONSTRAINT, "driving", "es", "no tiene carné de conducir"),
    (CONSTRAINT, "friday_focus", "en", "keeps Friday afternoons free of meetings for deep work"),
    (
        CONSTRAINT,
        "august_leave",
        "en",
        "must take his holidays in August, when Lucía's studio closes",
    ),
)

_TOM = (
    (PREFERENCE, "tea", "en", "takes his tea strong with a splash of milk, Barry's only"),
    (PREFERENCE, "rugby", "en", "supports Leinster rugby"),
    (PREFERENCE, "music", "en", "listens to trad sessions and Christy Moore"),
    (
        PREFERENCE,
        "walking_meetings",
        "en",
        "likes one-to-ones on foot rather than in a meeting room",
    ),
    (PREFERENCE, "pastry", "en", "can't resist pastéis de nata"),
    (HEALTH, "gout", "en", "has gout and steers clear of red meat and shellfish"),
    (
        HEALTH,
        "colour_blind",
        "en",
        "is red-green colour blind, so charts need patterns as well as colours",
    ),
    (HEALTH, "sleep_apnoea", "en", "has sleep apnoea and brings a CPAP machine on every trip"),
    (HEALTH, "heart", "en", "had a minor heart attack in 2022"),
    (FAMILY, "wife", "en", "his wife Aoife teaches at a primary school"),
    (FAMILY, "children", "en", "has three children: Cian, Róisín and baby Niamh"),
    (FAMILY, "father", "en", "his father is recovering from a hip operation in Galway"),
    (FAMILY, "sister", "en", "his sister Clare lives in Madrid and teaches English"),
    (WORK, "role", "en", "leads the payments team at Brightwater"),
    (WORK, "manager", "en", "reports to Henrik Aalto, the CTO"),
    (WORK, "direct_reports", "en", "has five direct reports, Marta and Javier among them"),
    (WORK, "review_board", "en", "sits on the architecture review board"),
    (WORK, "previous_job", "en", "spent eight years at Stripe in Dublin"),
    (TOOL, "phone", "en", "still uses a Samsung Galaxy S10"),
    (TOOL, "tracker", "en", "tracks all work in Linear"),
    (TOOL, "slides", "en", "makes slides in Google Slides and avoids PowerPoint"),
    (TOOL, "ide", "en", "writes Go in VS Code on the rare days he codes"),
    (PLACE, "home", "en", "lives in Dún Laoghaire, south of Dublin"),
    (PLACE, "hometown", "en", "grew up on a farm near Westport, County Mayo"),
    (PLACE, "home_office", "en", "his home office is a converted garden shed"),
    (PLACE, "summer", "en", "the family spends July in a caravan in Kerry"),
    (DATE_NUMBER, "birthday", "en", "born 2 February 1979"),
    (DATE_NUMBER, "anniversary", "en", "wedding anniversary is 21 August"),
    (DATE_NUMBER, "handicap", "en", "plays off a golf handicap of 14"),
    (DATE_NUMBER, "employee_id", "en", "his employee ID is BW-0042"),
    (NAME, "nickname", "en", "old colleagues call him Gally"),
    (NAME, "irish_name", "en", "his name in Irish is Tomás Ó Gallchobhair"),
    (NAME, "dog", "en", "the family's border collie is called Ned"),
    (NAME, "cardiologist", "en", "his cardiologist is Dr. Siobhán Keane"),
    (HABIT, "pier_walk", "en", "walks the pier every morning at seven"),
    (HABIT, "golf", "en", "plays golf on Saturday mornings"),
    (HABIT, "newspaper", "en", "reads the Irish Times in print every Sunday"),
    (HABIT, "cooking", "en", "cooks dinner for the family every weeknight"),
    (
        CONSTRAINT,
        "wednesdays",
        "en",
        "leaves at 15:00 on Wednesdays to coach Cian's hurling team",
    ),
    (CONSTRAINT, "travel_days", "en", "only travels Tuesday to Thursday"),
    (CONSTRAINT, "call_cutoff", "en", "takes no calls after 18:00 Irish time"),
    (
        CONSTRAINT,
        "july_offline",
        "en",
        "is offline during the July family holiday; do not contact him",
    ),
)

_JONAS = (
    (PREFERENCE, "coffee", "de", "trinkt nur Filterkaffee aus der Chemex, schwarz"),
    (PREFERENCE, "music", "de", "hört beim Arbeiten elektronische Musik, am liebsten Kraftwerk"),
    (PREFERENCE, "favourite_food", "de", "sein Lieblingsessen sind Käsespätzle"),
    (
        PREFERENCE,
        "holiday_style",
        "de",
        "macht im Urlaub am liebsten Radreisen, zuletzt die Elbe entlang",
    ),
    (PREFERENCE, "calls", "de", "mag keine spontanen Anrufe; lieber vorher im Chat fragen"),
    (HEALTH, "hay_fever", "de", "hat Heuschnupfen und ist im Mai oft schlapp"),
    (
        HEALTH,
        "back",
        "de",
        "hatte 2021 einen Bandscheibenvorfall und geht seitdem zur Physiotherapie",
    ),
    (HEALTH, "tinnitus", "de", "hat Tinnitus links und trägt im Großraumbüro Ohrstöpsel"),
    (HEALTH, "reading_glasses", "de", "braucht seit kurzem eine Lesebrille"),
    (FAMILY, "husband", "de", "lebt mit seinem Mann Felix zusammen, einem Tontechniker"),
    (FAMILY, "nieces", "de", "hat zwei Nichten in Hamburg, die er oft besucht"),
    (
        FAMILY,
        "parents",
        "de",
        "seine Eltern sind nach Lübeck gezogen und haben dort einen Schrebergarten",
    ),
    (FAMILY, "brother", "en", "his younger brother Lukas is a ship's engineer"),
    (WORK, "role", "de", "Site Reliability Engineer im Plattform-Team"),
    (WORK, "manager", "de", "berichtet an Amara Okafor, die Leiterin Plattform"),
    (WORK, "on_call", "de", "hat jede vierte Woche Rufbereitschaft"),
    (WORK, "project", "en", "leads the move from Nomad to Kubernetes"),
    (WORK, "previous_job", "de", "war vorher sieben Jahre im IT-Betrieb der Deutschen Bahn"),
    (TOOL, "editor", "de", "schreibt Code in Emacs mit Evil-Modus"),
    (TOOL, "laptop", "en", "uses a ThinkPad X1 Carbon running Arch Linux"),
    (TOOL, "shell", "de", "arbeitet in der fish-Shell mit tmux"),
    (TOOL, "passwords", "de", "verwaltet Passwörter mit KeePassXC"),
    (PLACE, "home", "de", "wohnt in Berlin-Kreuzberg, in der Oranienstraße"),
    (PLACE, "hometown", "de", "ist in Hamburg aufgewachsen"),
    (PLACE, "office", "de", "arbeitet meist im Berliner Büro am Alexanderplatz"),
    (PLACE, "local_bar", "de", "seine Stammkneipe ist der 'Anker' in der Muskauer Strasse"),
    (DATE_NUMBER, "birthday", "de", "hat am 30. November Geburtstag"),
    (DATE_NUMBER, "wedding_anniversary", "de", "Hochzeitstag mit Felix ist der 8. Juni"),
    (DATE_NUMBER, "shoe_size", "de", "hat Schuhgröße 46"),
    (DATE_NUMBER, "extension", "en", "his desk phone extension is 3312"),
    (NAME, "nickname", "de", "wird im Team 'Jo' genannt"),
    (
        NAME,
        "surname_spelling",
        "de",
        "schreibt seinen Namen in Formularen als Mueller, weil alte Systeme kein ü mögen",
    ),
    (NAME, "cat", "de", "hat einen Kater namens Herr Schröder"),
    (NAME, "home_server", "en", "named his home server 'Kühlschrank'"),
    (HABIT, "bouldering", "de", "geht zweimal pro Woche in Neukölln bouldern"),
    (HABIT, "breakfast", "de", "frühstückt nie; isst erst mittags um zwölf"),
    (HABIT, "commute", "de", "fährt mit der U8 ins Büro"),
    (HABIT, "sauna", "de", "geht sonntags in die Sauna"),
    (
        CONSTRAINT,
        "no_flying",
        "de",
        "fliegt aus Klimagründen nicht; Dienstreisen nur mit der Bahn",
    ),
    (
        CONSTRAINT,
        "language",
        "de",
        "spricht kein Spanisch; Meetings mit Madrid bitte auf Englisch",
    ),
    (CONSTRAINT, "fridays", "de", "hat freitags frei (Vier-Tage-Woche)"),
    (
        CONSTRAINT,
        "prod_access",
        "en",
        "has no production database access outside his on-call weeks",
    ),
)

_AMARA = (
    (PREFERENCE, "tea", "en", "drinks rooibos all day and dislikes coffee"),
    (PREFERENCE, "music", "en", "loves Afrobeat, Fela Kuti above all"),
    (PREFERENCE, "agendas", "en", "wants an agenda sent the day before any meeting"),
    (
        PREFERENCE,
        "favourite_food",
        "en",
        "her favourite dish is jollof rice, and she is strict about how it's made",
    ),
    (PREFERENCE, "films", "en", "watches Korean thrillers to unwind"),
    (HEALTH, "blood_pressure", "en", "takes amlodipine for high blood pressure"),
    (HEALTH, "eye_surgery", "en", "had laser eye surgery in 2019 and no longer needs glasses"),
    (HEALTH, "penicillin", "en", "allergic to penicillin"),
    (HEALTH, "tennis_elbow", "en", "sees a physiotherapist for tennis elbow"),
    (FAMILY, "husband", "en", "married to Chidi, a structural engineer"),
    (FAMILY, "twins", "en", "has twin boys who start secondary school this September"),
    (FAMILY, "mother", "en", "her mother moved in with them last winter"),
    (FAMILY, "brother", "en", "her brother runs a restaurant in Lagos"),
    (WORK, "role", "en", "Head of Platform Engineering at Brightwater"),
    (WORK, "manager", "en", "reports to the CTO, Henrik Aalto"),
    (WORK, "reports", "en", "manages Jonas Muller and three other SREs"),
    (WORK, "okr", "en", "this quarter's goal is cutting cloud spend by 15%"),
    (WORK, "hiring", "en", "is hiring a senior SRE for the Berlin office"),
    (TOOL, "laptop", "en", "uses a MacBook Pro with 32 GB of RAM"),
    (TOOL, "diagrams", "en", "draws architecture diagrams in Excalidraw"),
    (TOOL, "todo", "en", "keeps her to-do list in Things 3"),
    (TOOL, "calendar", "en", "lets Reclaim.ai schedule her focus time"),
    (PLACE, "home", "en", "lives in Walthamstow, north-east London"),
    (PLACE, "birthplace", "en", "was born in Enugu, Nigeria, and moved to the UK at twelve"),
    (PLACE, "office", "en", "works from the London office in Shoreditch"),
    (PLACE, "easter", "en", "spends every Easter in a cottage in Cornwall"),
    (DATE_NUMBER, "birthday", "en", "her birthday is 27 July"),
    (
        DATE_NUMBER,
        "start_date",
        "en",
        "started at Brightwater in April 2020 as employee number 112",
    ),
    (DATE_NUMBER, "run_pb", "en", "her 10k personal best is 52:40"),
    (DATE_NUMBER, "age", "en", "turned 44 this year"),
    (NAME, "nickname", "en", "close friends call her Ama"),
    (NAME, "pronunciation", "en", "her surname is pronounced oh-KAH-for"),
    (NAME, "dog", "en", "has a dachshund called Pepper"),
    (NAME, "assistant", "en", "her executive assistant is Rosie Tan"),
    (HABIT, "tennis", "en", "plays tennis at a club on Wednesday evenings"),
    (HABIT, "journal", "en", "writes three lines in a journal every night"),
    (HABIT, "desk_lunch", "en", "eats lunch at her desk while reading Hacker News"),
    (HABIT, "choir", "en", "sings in a gospel choir on Sundays"),
    (CONSTRAINT, "school_run", "en", "does the school run, so nothing before 9:15"),
    (
        CONSTRAINT,
        "passport",
        "en",
        "cannot travel abroad until her new passport arrives in May",
    ),
    (CONSTRAINT, "meeting_length", "en", "won't accept meetings longer than 45 minutes"),
    (CONSTRAINT, "spend_limit", "en", "can approve spending up to £5,000 without the CTO"),
)

_INES = (
    (PREFERENCE, "coffee", "pt", "bebe um galão escuro ao pequeno-almoço"),
    (PREFERENCE, "music", "pt", "adora fado, sobretudo Carminho"),
    (PREFERENCE, "football_club", "pt", "é adepta ferrenha do FC Porto"),
    (PREFERENCE, "favourite_dish", "pt", "o prato preferido é a francesinha"),
    (PREFERENCE, "contact", "pt", "prefere ser contactada por WhatsApp e não por email"),
    (HEALTH, "pregnancy", "pt", "está grávida de cinco meses"),
    (HEALTH, "fructose", "pt", "é intolerante à frutose"),
    (HEALTH, "scoliosis", "pt", "tem escoliose ligeira"),
    (HEALTH, "cat_allergy", "pt", "tem alergia a pelo de gato"),
    (
        FAMILY,
        "partner",
        "pt",
        "o companheiro, Nuno, é enfermeiro no Hospital de São João",
    ),
    (FAMILY, "grandmother", "pt", "a avó Rosa, de 92 anos, vive com eles"),
    (FAMILY, "brother", "pt", "o irmão mais novo estuda medicina em Braga"),
    (FAMILY, "father", "pt", "o pai é pescador em Matosinhos"),
    (WORK, "role", "pt", "fisioterapeuta e coordenadora da clínica da Boavista"),
    (WORK, "manager", "pt", "responde à Sofía Herrera, diretora de operações clínicas"),
    (WORK, "team_size", "pt", "coordena uma equipa de sete terapeutas"),
    (WORK, "specialty", "en", "specialises in rehabilitation after knee surgery"),
    (WORK, "shifts", "pt", "trabalha das 8h às 16h, de segunda a sexta"),
    (TOOL, "booking", "pt", "marca as consultas no software Clinicare"),
    (TOOL, "tablet", "en", "uses an iPad to show patients their exercises"),
    (TOOL, "rota", "pt", "faz as escalas da equipa numa folha do Google Sheets"),
    (TOOL, "strava", "pt", "regista as caminhadas no Strava"),
    (PLACE, "home", "pt", "vive na Foz do Douro, no Porto"),
    (PLACE, "birthplace", "pt", "nasceu em Viana do Castelo"),
    (PLACE, "august", "pt", "passa agosto em Vila Nova de Milfontes"),
    (PLACE, "pilates", "pt", "faz pilates num estúdio na Rua de Cedofeita"),
    (DATE_NUMBER, "birthday", "pt", "faz anos a 25 de abril, dia de feriado nacional"),
    (DATE_NUMBER, "leave_start", "pt", "a licença parental começa a 1 de fevereiro"),
    (DATE_NUMBER, "licence_number", "pt", "a cédula profissional dela tem o n.º 5521"),
    (DATE_NUMBER, "tenure", "pt", "trabalha na Lumen há nove anos"),
    (NAME, "nickname", "pt", "os colegas tratam-na por Nês"),
    (NAME, "baby_name", "pt", "se for menina, o bebé vai chamar-se Leonor"),
    (NAME, "dog", "pt", "tem um podengo chamado Tejo"),
    (NAME, "obstetrician", "pt", "a obstetra dela é a Dra. Filipa Matos"),
    (HABIT, "evening_walk", "pt", "caminha 40 minutos à beira-mar ao fim da tarde"),
    (HABIT, "reading", "pt", "lê sempre um pouco antes de dormir, em papel"),
    (HABIT, "meal_prep", "pt", "cozinha as refeições da semana inteira ao domingo"),
    (HABIT, "lunch", "pt", "almoca sempre as 13h em ponto"),
    (CONSTRAINT, "no_driving", "pt", "nao conduz; vai de metro para o trabalho"),
    (CONSTRAINT, "xray", "pt", "por causa da gravidez, não pode entrar na sala de raio-X"),
    (
        CONSTRAINT,
        "wednesdays",
        "pt",
        "às quartas sai às 15h para levar a avó ao centro de saúde",
    ),
    (CONSTRAINT, "language", "pt", "só fala português e inglês; não percebe alemão"),
)

_KLARA = (
    (PREFERENCE, "tea", "de", "trinkt grünen Sencha-Tee, ohne Zucker"),
    (PREFERENCE, "music", "de", "hört beim Rechnen Barockmusik"),
    (PREFERENCE, "favourite_dish", "de", "ihr Lieblingsgericht ist Kaiserschmarrn"),
    (
        PREFERENCE,
        "minutes",
        "de",
        "will nach jedem Meeting ein schriftliches Protokoll der Entscheidungen",
    ),
    (PREFERENCE, "fixed_desk", "de", "möchte im Büro immer denselben Platz, kein Hot-Desking"),
    (HEALTH, "wheelchair", "de", "sitzt seit einem Skiunfall 2008 im Rollstuhl"),
    (
        HEALTH,
        "wasp_allergy",
        "de",
        "ist allergisch gegen Wespenstiche und hat immer einen Adrenalin-Pen dabei",
    ),
    (HEALTH, "thyroid", "de", "nimmt L-Thyroxin für die Schilddrüse"),
    (HEALTH, "myopia", "de", "ist stark kurzsichtig, minus sechs Dioptrien"),
    (
        FAMILY,
        "husband",
        "de",
        "ist mit Matthias verheiratet, der als Pilot bei Austrian Airlines fliegt",
    ),
    (FAMILY, "daughter", "de", "hat eine Tochter, Emma, die in Graz studiert"),
    (FAMILY, "sister", "en", "her sister Anke runs an organic farm outside Munich"),
    (
        FAMILY,
        "mother",
        "de",
        "ihre Mutter ist dement und lebt in einem Pflegeheim in Salzburg",
    ),
    (WORK, "role", "de", "arbeitet als Biostatistikerin im Forschungsteam"),
    (WORK, "manager", "de", "ihr Vorgesetzter ist Dr. Daniel Brandt, der Leiter der Forschung"),
    (
        WORK,
        "knee_study",
        "de",
        "leitet die Auswertung der Knie-Reha-Studie mit der Klinik Boavista",
    ),
    (WORK, "phd", "en", "holds a PhD in epidemiology from LMU Munich"),
    (WORK, "reviewer", "en", "reviews papers for the journal Statistics in Medicine"),
    (TOOL, "stats_language", "de", "programmiert in R mit RStudio"),
    (TOOL, "latex", "de", "schreibt Paper in LaTeX auf Overleaf"),
    (TOOL, "desktop", "de", "hat im Büro einen Linux-Rechner mit Ubuntu"),
    (TOOL, "zotero", "de", "verwaltet ihre Literatur in Zotero"),
    (PLACE, "home", "de", "wohnt in Wien, im siebten Bezirk"),
    (PLACE, "hometown", "de", "stammt aus München"),
    (PLACE, "office", "de", "ihr Büro ist in der Mariahilfer Straße"),
    (PLACE, "summer", "de", "verbringt den Sommer am Attersee"),
    (DATE_NUMBER, "birthday", "de", "wurde am 4. Oktober 1975 geboren"),
    (DATE_NUMBER, "staff_number", "de", "hat die Personalnummer L-2291"),
    (DATE_NUMBER, "married_since", "de", "ist seit 1999 verheiratet"),
    (DATE_NUMBER, "phd_students", "de", "betreut drei Doktoranden"),
    (NAME, "given_name", "de", "ihr Taufname ist Klarissa, sie nennt sich aber Klara"),
    (NAME, "maiden_name", "de", "heißt seit der Hochzeit Schmidt, geboren Weiß"),
    (NAME, "dog", "de", "ihr Assistenzhund ist ein Labrador namens Moritz"),
    (NAME, "gp", "de", "ihre Hausärztin ist Dr. Eva Pichler"),
    (HABIT, "swimming", "de", "geht montags und freitags vor der Arbeit schwimmen"),
    (HABIT, "crime_novels", "de", "liest abends Krimis"),
    (
        HABIT,
        "coffeehouse",
        "de",
        "verbringt den Sonntagvormittag mit Zeitung im Kaffeehaus",
    ),
    (HABIT, "meditation", "de", "meditiert zehn Minuten vor jedem Arbeitstag"),
    (CONSTRAINT, "part_time", "de", "arbeitet 80 Prozent und ist mittwochs nicht erreichbar"),
    (
        CONSTRAINT,
        "step_free",
        "en",
        "can only attend meetings in rooms with step-free access",
    ),
    (CONSTRAINT, "patient_data", "de", "darf keine Patientendaten auf ihren Laptop laden"),
    (
        CONSTRAINT,
        "language",
        "de",
        "versteht kein Portugiesisch; Unterlagen bitte auf Englisch oder Deutsch",
    ),
)

_SOFIA = (
    (PREFERENCE, "coffee", "es", "toma café de olla con canela"),
    (
        PREFERENCE,
        "spicy",
        "es",
        "le encanta la comida muy picante y lleva salsa Valentina en el bolso",
    ),
    (PREFERENCE, "music", "es", "escucha boleros y a Natalia Lafourcade"),
    (PREFERENCE, "flowers", "es", "sus flores favoritas son los girasoles"),
    (PREFERENCE, "standups", "es", "prefiere reuniones de pie de quince minutos"),
    (HEALTH, "anxiety", "es", "toma sertralina para la ansiedad"),
    (HEALTH, "shellfish", "es", "es alérgica a los mariscos"),
    (HEALTH, "hearing_aid", "es", "usa audífono en el oído derecho"),
    (HEALTH, "braces", "es", "lleva brackets desde enero"),
    (FAMILY, "wife", "es", "está casada con Daniela, que es chef"),
    (FAMILY, "son", "es", "tiene un hijo adolescente, Mateo, de 15 años"),
    (FAMILY, "father", "es", "su papá vive en Guadalajara y tiene Parkinson"),
    (FAMILY, "sister", "es", "su hermana menor vive en Toronto"),
    (WORK, "role", "es", "directora de operaciones clínicas de Lumen"),
    (WORK, "manager", "es", "reporta a la CEO, Margarida Sousa"),
    (WORK, "clinics", "es", "tiene a su cargo cuatro clínicas en el norte de Portugal"),
    (WORK, "ethics", "en", "also sits on the research team's ethics committee"),
    (WORK, "previous_job", "es", "antes dirigía hospitales privados en Monterrey"),
    (TOOL, "notion", "es", "lo organiza todo en Notion, hasta la lista de la compra"),
    (
        TOOL,
        "phones",
        "es",
        "lleva dos móviles: un iPhone con número mexicano y un Android con número portugués",
    ),
    (TOOL, "power_bi", "es", "revisa los indicadores de las clínicas en Power BI"),
    (TOOL, "deepl", "en", "uses DeepL to translate documents into Portuguese"),
    (PLACE, "home", "es", "vive en Matosinhos, cerca de la playa"),
    (PLACE, "hometown", "es", "es de Guadalajara, Jalisco"),
    (PLACE, "office", "es", "trabaja en la sede de Lumen en la Avenida da Boavista"),
    (PLACE, "christmas", "es", "pasa la Navidad en Oaxaca con la familia de Daniela"),
    (
        DATE_NUMBER,
        "birthday",
        "es",
        "su cumpleaños es el 12 de diciembre, día de la Virgen de Guadalupe",
    ),
    (DATE_NUMBER, "arrival", "es", "llegó a Portugal en 2019"),
    (DATE_NUMBER, "age", "es", "tiene 47 años"),
    (DATE_NUMBER, "budget", "es", "maneja un presupuesto anual de 2,3 millones de euros"),
    (NAME, "family_nickname", "es", "en su familia le dicen Chofis"),
    (NAME, "cats", "es", "tiene dos gatos, Frida y Diego"),
    (NAME, "assistant", "es", "su asistente se llama Rui Pinto"),
    (NAME, "full_name", "es", "su nombre completo es Sofía Guadalupe Herrera Castañeda"),
    (HABIT, "yoga", "es", "hace yoga todos los dias a las 6 de la manana"),
    (HABIT, "mole", "es", "cocina mole para todo el equipo cada Día de Muertos"),
    (
        HABIT,
        "email_batches",
        "es",
        "contesta correos solo dos veces al día, a las 9 y a las 16",
    ),
    (
        HABIT,
        "friday_series",
        "es",
        "ve una serie mexicana con su hijo los viernes por la noche",
    ),
    (CONSTRAINT, "home_fridays", "es", "trabaja desde casa los viernes, sin excepción"),
    (
        CONSTRAINT,
        "signing_limit",
        "es",
        "no puede firmar contratos de más de 50.000 euros sin la CEO",
    ),
    (
        CONSTRAINT,
        "evening_cutoff",
        "es",
        "no acepta reuniones despues de las 18h, hora de Portugal",
    ),
    (
        CONSTRAINT,
        "data_residency",
        "en",
        "cannot share patient data outside the EU, even with Mexican partners",
    ),
)

FACT_RECORDS: dict[str, tuple[Fact, ...]] = {
    person: tuple(Fact(key, kind, lang, text) for kind, key, lang, text in rows)
    for person, rows in (
        ("marta", _MARTA),
        ("javier", _JAVIER),
        ("tom", _TOM),
        ("jonas", _JONAS),
        ("amara", _AMARA),
        ("ines", _INES),
        ("klara", _KLARA),
        ("sofia", _SOFIA),
    )
}

# person -> {key: fact}
FACTS: dict[str, dict[str, str]] = {
    person: {fact.key: fact.text for fact in facts} for person, facts in FACT_RECORDS.items()
}


def fact_record(person: str, key: str) -> Fact:
    for fact in FACT_RECORDS[person]:
        if fact.key == key:
            return fact
    raise KeyError(f"{person}/{key}")


_PAY = "team:brightwater/payments"
_PLAT = "team:brightwater/platform"
_OPS = "team:lumen/clinic-ops"
_RES = "team:lumen/research"
_BW = "tenant:brightwater"
_LU = "tenant:lumen"
_GL = "global"

SCOPED_FACTS: tuple[ScopedFact, ...] = (
    # Team payments (marta, javier, tom).
    ScopedFact(
        _PAY,
        "on_call",
        WORK,
        "en",
        "payments on-call rotates weekly; handover is Monday at 10:00 Lisbon time",
        same_key_as=("marta/on_call",),
        resembles=("jonas/on_call",),
    ),
    ScopedFact(
        _PAY,
        "manager",
        WORK,
        "en",
        "the payments team is led by Tom Gallagher",
        same_key_as=("marta/manager", "javier/manager", "tom/manager"),
        resembles=("marta/manager",),
    ),
    ScopedFact(_PAY, "standup", POLICY, "en", "daily stand-up at 09:45, cameras optional"),
    ScopedFact(
        _PAY,
        "coffee",
        PREFERENCE,
        "en",
        "the payments corner has a filter machine and a Chemex; beans are ordered monthly",
        same_key_as=("marta/coffee", "javier/coffee"),
        resembles=("jonas/coffee",),
    ),
    ScopedFact(
        _PAY,
        "office",
        PLACE,
        "es",
        "el equipo de pagos se reúne en la oficina de Madrid el primer lunes de cada mes",
        same_key_as=("marta/office", "javier/office"),
        resembles=("javier/office",),
    ),
    ScopedFact(
        _PAY,
        "release_freeze",
        CONSTRAINT,
        "en",
        "no payment releases during the last three days of a month",
    ),
    ScopedFact(
        _PAY,
        "languages",
        TOOL,
        "en",
        "payments services are written in Kotlin, with Python for tooling",
        same_key_as=("marta/languages",),
        resembles=("marta/languages", "tom/ide"),
    ),
    ScopedFact(
        _PAY,
        "conference_budget",
        CONSTRAINT,
        "pt",
        "cada pessoa do time tem 1.200 euros por ano para formação e eventos",
        same_key_as=("marta/conference_budget",),
        resembles=("marta/conference_budget",),
    ),
    ScopedFact(
        _PAY,
        "quarter_close",
        CONSTRAINT,
        "es",
        "el cierre trimestral de pagos ocupa los últimos cinco días laborables del trimestre",
        resembles=("javier/quarter_end", "javier/insomnia"),
    ),
    # Team platform (jonas, amara).
    ScopedFact(
        _PLAT,
        "on_call",
        WORK,
        "de",
        "Plattform-Rufbereitschaft: jede Woche zwei Personen, Übergabe dienstags",
        same_key_as=("jonas/on_call",),
        resembles=("marta/on_call",),
    ),
    ScopedFact(
        _PLAT,
        "laptop",
        TOOL,
        "en",
        "platform engineers may pick any Linux laptop they like",
        same_key_as=("jonas/laptop", "amara/laptop"),
        resembles=("jonas/laptop",),
    ),
    ScopedFact(
        _PLAT,
        "editor",
        TOOL,
        "en",
        "the team's shared editor settings are kept for VS Code",
        same_key_as=("jonas/editor",),
        resembles=("tom/ide",),
    ),
    ScopedFact(
        _PLAT,
        "chat",
        POLICY,
        "de",
        "dringende Fragen bitte im Kanal #platform-help stellen, nicht per Direktnachricht",
        resembles=("jonas/calls", "javier/communication"),
    ),
    ScopedFact(
        _PLAT,
        "office",
        PLACE,
        "de",
        "das Plattform-Team trifft sich donnerstags im Berliner Büro",
        same_key_as=("jonas/office", "amara/office"),
        resembles=("jonas/office",),
    ),
    ScopedFact(_PLAT, "runbooks", POLICY, "en", "runbooks live in the platform wiki under /ops"),
    ScopedFact(
        _PLAT,
        "meeting_length",
        CONSTRAINT,
        "en",
        "platform meetings are booked for 25 or 50 minutes",
        same_key_as=("amara/meeting_length",),
        resembles=("amara/meeting_length",),
    ),
    ScopedFact(
        _PLAT,
        "hiring",
        WORK,
        "en",
        "the platform team has two open roles: an SRE and a database administrator",
        same_key_as=("amara/hiring",),
        resembles=("amara/hiring",),
    ),
    # Team clinic-ops (ines, sofia).
    ScopedFact(
        _OPS,
        "shifts",
        WORK,
        "pt",
        "as clínicas abrem das 7h30 às 20h e os turnos rodam todas as semanas",
        same_key_as=("ines/shifts",),
        resembles=("ines/shifts",),
    ),
    ScopedFact(
        _OPS,
        "booking",
        TOOL,
        "pt",
        "todas as marcações de doentes passam pelo Clinicare, nunca por papel",
        same_key_as=("ines/booking",),
        resembles=("ines/booking",),
    ),
    ScopedFact(
        _OPS,
        "manager",
        WORK,
        "pt",
        "a equipa de operações clínicas responde à diretora Sofía Herrera",
        same_key_as=("ines/manager", "sofia/manager"),
        resembles=("ines/manager",),
    ),
    ScopedFact(
        _OPS,
        "contact",
        POLICY,
        "es",
        "las urgencias de las clínicas se avisan por teléfono, nunca por correo",
        same_key_as=("ines/contact",),
        resembles=("ines/contact", "sofia/email_batches"),
    ),
    ScopedFact(
        _OPS,
        "xray",
        PLACE,
        "pt",
        "a sala de raio-X da Boavista fica no piso -1",
        same_key_as=("ines/xray",),
    ),
    ScopedFact(
        _OPS,
        "uniform",
        POLICY,
        "pt",
        "a farda é azul-marinho, com sapatos brancos fechados",
    ),
    ScopedFact(
        _OPS,
        "lunch",
        HABIT,
        "es",
        "el equipo come junto a las 13:30 en la sala grande",
        same_key_as=("ines/lunch",),
        resembles=("ines/lunch", "marta/lunch"),
    ),
    ScopedFact(
        _OPS,
        "language",
        CONSTRAINT,
        "pt",
        "a documentação clínica tem de estar sempre em português",
        same_key_as=("ines/language",),
        resembles=("klara/language",),
    ),
    # Team research (klara, sofia).
    ScopedFact(
        _RES,
        "stats_language",
        TOOL,
        "de",
        "das Forschungsteam rechnet standardmäßig in Stata",
        same_key_as=("klara/stats_language",),
        resembles=("klara/stats_language",),
    ),
    ScopedFact(
        _RES,
        "ethics",
        POLICY,
        "en",
        "every study needs ethics committee approval before any data is collected",
        same_key_as=("sofia/ethics",),
        resembles=("sofia/ethics",),
    ),
    ScopedFact(
        _RES,
        "patient_data",
        CONSTRAINT,
        "de",
        "Patientendaten nur pseudonymisiert auf dem Forschungsserver speichern",
        same_key_as=("klara/patient_data",),
        resembles=("klara/patient_data", "sofia/data_residency"),
    ),
    ScopedFact(_RES, "journal_club", POLICY, "de", "Journal Club jeden zweiten Dienstag um 14 Uhr"),
    ScopedFact(
        _RES,
        "office",
        PLACE,
        "de",
        "die Forschung sitzt im dritten Stock, Mariahilfer Strasse 88",
        same_key_as=("klara/office", "sofia/office"),
        resembles=("klara/office",),
    ),
    ScopedFact(
        _RES,
        "reference_manager",
        TOOL,
        "en",
        "the team's shared literature library is kept in Mendeley",
        resembles=("klara/zotero",),
    ),
    ScopedFact(
        _RES,
        "papers",
        POLICY,
        "en",
        "manuscripts are drafted in Word with tracked changes for co-authors",
        resembles=("klara/latex",),
    ),
    # Tenant brightwater.
    ScopedFact(
        _BW,
        "laptop",
        POLICY,
        "en",
        "the standard company laptop is a Dell Latitude 7440 with Windows 11",
        pinned=True,
        same_key_as=("jonas/laptop", "amara/laptop"),
        resembles=("amara/laptop",),
    ),
    ScopedFact(
        _BW,
        "expenses",
        POLICY,
        "en",
        "expenses above 500 euros need a director's approval in advance",
        pinned=True,
        resembles=("amara/spend_limit",),
    ),
    ScopedFact(
        _BW,
        "travel",
        POLICY,
        "en",
        "book all business travel through TravelPerk; economy class on flights under six hours",
        pinned=True,
        same_key_as=("marta/travel",),
        resembles=("tom/travel_days", "jonas/no_flying"),
    ),
    ScopedFact(
        _BW,
        "office",
        PLACE,
        "pt",
        "a sede da Brightwater fica em Lisboa, no Cais do Sodré",
        same_key_as=("marta/office", "javier/office", "jonas/office", "amara/office"),
        resembles=("marta/office",),
    ),
    ScopedFact(
        _BW,
        "hours",
        POLICY,
        "es",
        "horario flexible: se puede entrar entre las 8:00 y las 10:00",
        same_key_as=("javier/hours",),
        resembles=("javier/hours",),
    ),
    ScopedFact(
        _BW,
        "holidays",
        POLICY,
        "de",
        "alle haben 25 Urlaubstage im Jahr plus die örtlichen Feiertage",
        resembles=("javier/august_leave",),
    ),
    ScopedFact(
        _BW,
        "passwords",
        POLICY,
        "en",
        "passwords must be kept in 1Password; no other password manager is allowed",
        pinned=True,
        same_key_as=("jonas/passwords",),
        resembles=("jonas/passwords",),
    ),
    ScopedFact(
        _BW,
        "coffee",
        PREFERENCE,
        "en",
        "free coffee, tea and fruit in every office kitchen",
        same_key_as=("marta/coffee", "javier/coffee", "jonas/coffee"),
        resembles=("amara/tea", "tom/tea"),
    ),
    ScopedFact(
        _BW,
        "friday_focus",
        POLICY,
        "en",
        "Friday afternoons are meeting-light across the company",
        same_key_as=("javier/friday_focus",),
        resembles=("javier/friday_focus", "jonas/fridays"),
    ),
    ScopedFact(
        _BW,
        "phone",
        TOOL,
        "pt",
        "o telemóvel de empresa é um iPhone SE",
        same_key_as=("javier/phone", "tom/phone"),
        resembles=("javier/phone",),
    ),
    # Tenant lumen.
    ScopedFact(
        _LU,
        "patient_data",
        POLICY,
        "pt",
        "dados de doentes nunca saem de servidores na União Europeia",
        pinned=True,
        same_key_as=("klara/patient_data",),
        resembles=("sofia/data_residency",),
    ),
    ScopedFact(
        _LU,
        "language",
        POLICY,
        "pt",
        "a língua de trabalho é o português; reuniões internacionais em inglês",
        pinned=True,
        same_key_as=("ines/language", "klara/language"),
        resembles=("ines/language",),
    ),
    ScopedFact(
        _LU,
        "manager",
        WORK,
        "es",
        "la CEO de Lumen es Margarida Sousa",
        same_key_as=("ines/manager", "klara/manager", "sofia/manager"),
        resembles=("sofia/manager",),
    ),
    ScopedFact(
        _LU,
        "office",
        PLACE,
        "pt",
        "a sede da Lumen é na Avenida da Boavista, no Porto",
        same_key_as=("klara/office", "sofia/office"),
        resembles=("sofia/office",),
    ),
    ScopedFact(_LU, "holidays", POLICY, "pt", "22 dias úteis de férias por ano"),
    ScopedFact(
        _LU,
        "dress",
        POLICY,
        "en",
        "clinical staff wear the navy uniform; office staff dress casually",
    ),
    ScopedFact(
        _LU,
        "flu_vaccine",
        POLICY,
        "pt",
        "a vacina da gripe é obrigatória para quem atende doentes",
        pinned=True,
    ),
    ScopedFact(
        _LU,
        "signing_limit",
        POLICY,
        "es",
        "los contratos de más de 100.000 euros los firma la CEO",
        pinned=True,
        same_key_as=("sofia/signing_limit",),
        resembles=("sofia/signing_limit",),
    ),
    ScopedFact(
        _LU,
        "shifts",
        POLICY,
        "pt",
        "horário de referência dos escritórios: das 9h às 18h",
        same_key_as=("ines/shifts",),
        resembles=("ines/shifts",),
    ),
    # Global.
    ScopedFact(_GL, "timezone", POLICY, "en", "server timestamps are stored in UTC"),
    ScopedFact(
        _GL,
        "language",
        POLICY,
        "en",
        "answer in the language the person writes in",
        same_key_as=("jonas/language", "ines/language", "klara/language"),
    ),
    ScopedFact(_GL, "units", POLICY, "en", "use metric units and 24-hour times"),
    ScopedFact(_GL, "date_format", POLICY, "en", "write dates as 2024-05-31"),
    ScopedFact(
        _GL,
        "birthday",
        POLICY,
        "en",
        "never announce a birthday to others without the person's consent",
        pinned=True,
        same_key_as=tuple(f"{person}/birthday" for person in PEOPLE),
    ),
    ScopedFact(
        _GL,
        "manager",
        POLICY,
        "en",
        "questions about someone's workload go to their line manager",
        same_key_as=tuple(f"{person}/manager" for person in PEOPLE),
    ),
    ScopedFact(
        _GL,
        "health_privacy",
        POLICY,
        "en",
        "health details are private; discuss them only with the person themselves",
        pinned=True,
    ),
    ScopedFact(
        _GL,
        "holidays",
        POLICY,
        "pt",
        "os feriados seguem o calendário oficial de cada país",
    ),
    ScopedFact(
        _GL,
        "home",
        POLICY,
        "es",
        "no compartas la dirección de casa de nadie con terceros",
        same_key_as=tuple(f"{person}/home" for person in PEOPLE),
    ),
)
