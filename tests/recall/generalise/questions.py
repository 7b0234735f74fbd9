"""Questions about the people of people.py, and off-topic questions that nothing answers.

QUESTIONS: one per personal fact, (text, person, key, lang, shares_word). The text asks in
other words than the fact; `shares_word` says whether it nevertheless shares a content word
with the fact or its key, as `shares_content_word` below decides it: lower case, accents
folded, ß as ss, function words of the four languages left out, a plural s (not ss) dropped;
two words match when equal, when one of at least four letters begins the other, when one of
at least five letters ends the other (as German compounds do), or when they begin with the
same five letters. Most share nothing; some share exactly the kind of word lexical search can
use. A question's language may differ from its fact's: English questions about Portuguese,
Spanish and German facts, and questions in those languages about English ones (and a few
across them).

OFF_TOPIC: (text, person, lang) for things nothing on file about that person, their teams,
their tenant or `global` answers; a search should bring back little or nothing.
"""

import re
import unicodedata
from typing import NamedTuple

from tests.recall.generalise.people import fact_record


class Question(NamedTuple):
    text: str
    person: str
    key: str
    lang: str
    shares_word: bool

    @property
    def kind(self) -> str:
        return fact_record(self.person, self.key).kind

    @property
    def fact_lang(self) -> str:
        return fact_record(self.person, self.key).lang


class OffTopic(NamedTuple):
    text: str
    person: str
    lang: str


# Function words (and a few that carry no topic: "kind", "sort", "still") in en, pt, es, de,
# written accent-folded as `content_words` compares them.
STOPWORDS = frozenset(
    """
    a an the and or but of to in on at for with by from as is are was were be been being am
    do does did done has have had having he she him her his hers they them their theirs it its
    we us our you your i me my mine what which who whom whose when where why how any anything
    some something there here this that these those can could should would will shall may might
    must not no nor get got into about over ahead than then so if also all each every one own
    much many more most very just still else out up off before after until while kind sort
    yet ever way lot let make made does doesn don didn isn aren wasn won can cannot
    o os um uma uns umas de da do das dos em na no nas nos num numa por para pra com sem e ou
    que quem qual quais quando onde como porque quanto quantos quantas ela ele elas eles dela
    dele delas deles lhe lhes se seu sua seus suas meu minha esta estao esse essa este isso
    isto aquele aquela sao foi ser estar tem tem ter ha ao aos as mais menos muito muita ja nao
    sim algum alguma algo devo posso pode podem costuma faz fazer fez ainda sempre antes depois
    tambem mesmo outra outro vai ir nunca
    el la los las un unas unos del al en con sin por para y o que quien cual cuales cuando
    donde como cuanto cuantos cuantas su sus le les lo se es son estan ser estar tiene tienen
    tener hay mas muy ya no si alguno alguna algun algo eso esto ese esa este puede puedo pueden
    hace hacer suele mi tu nos cada antes despues siempre nunca tambien otro otra
    der die das den dem des ein eine einen einem einer eines und oder aber im an am auf aus bei
    beim mit nach von vom zu zum zur fur uber unter vor ist sind war sein seine seinen seinem
    seiner seines ihr ihre ihren ihrem ihrer ihres er sie es man ich wer wem wen was welche
    welcher welches welchem welchen wann wo wie warum womit wohin woher hat haben hatte kann
    konnen darf muss soll nicht kein keine noch schon auch sehr gern gerne etwas denn ob als so
    bitte immer macht machen wird werden
    """.split()
)


def _fold(text: str) -> str:
    text = text.lower().replace("ß", "ss")
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def content_words(text: str) -> set[str]:
    words = set()
    for word in re.findall(r"[a-z0-9]+", _fold(text)):
        if len(word) < 3 or word in STOPWORDS:
            continue
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(word)
    return words


def _match(one: str, other: str) -> bool:
    if one == other:
        return True
    short, long = sorted((one, other), key=len)
    if len(short) >= 4 and long.startswith(short):
        return True
    if len(short) >= 5 and long.endswith(short):
        return True
    return len(short) >= 5 and long[:5] == short[:5]


def shared_content_words(question: str, key: str, fact: str) -> set[str]:
    """The question's content words that match a content word of the fact or its key."""
    theirs = content_words(fact) | content_words(re.sub(r"[._-]", " ", key))
    return {word for word in content_words(question) if any(_match(word, t) for t in theirs)}


def shares_content_word(question: str, key: str, fact: str) -> bool:
    return bool(shared_content_words(question, key, fact))


# Per person: (key, question language, shares a content word, question).
_ASKED = {
    "marta": (
        ("coffee", "pt", True, "Que tipo de café ela prefere?"),
        ("music", "pt", True, "Ela curte samba?"),
        ("feedback", "en", False, "How should I tell her when her work isn't good enough?"),
        ("desk", "pt", False, "Onde ela prefere sentar no escritório?"),
        ("series", "pt", True, "Que tipo de série ela maratona?"),
        ("drug_allergy", "pt", False, "Tem algum remédio que ela não pode tomar?"),
        ("migraine", "en", False, "Does she get bad headaches?"),
        ("contacts", "pt", False, "Ela enxerga bem sem ajuda?"),
        (
            "coeliac",
            "pt",
            False,
            "Posso pedir pizza e pão normal para ela no almoço da equipe?",
        ),
        ("husband", "en", False, "What does her spouse do for a living?"),
        ("son", "pt", False, "Qual a idade do menino dela?"),
        ("mother", "pt", True, "Onde mora a mãe dela?"),
        ("sister", "en", False, "Is she a twin?"),
        ("role", "pt", False, "Qual é a função dela na empresa?"),
        ("manager", "pt", False, "A quem ela presta contas?"),
        ("project", "pt", False, "Em que ela está trabalhando agora?"),
        ("on_call", "en", False, "How often does she carry the pager?"),
        ("previous_job", "pt", True, "Ela já trabalhou num banco digital?"),
        ("ide", "pt", False, "Ela usa VS Code?"),
        ("languages", "pt", False, "Em que linguagens ela programa?"),
        ("notes", "en", False, "Which app does she keep her to-do lists in?"),
        ("keyboard", "en", True, "What does she type on?"),
        ("home", "pt", True, "Ela mora em Lisboa mesmo?"),
        ("office", "en", False, "Which site does she normally go in to?"),
        ("hometown", "pt", False, "Em que cidade ela passou a infância?"),
        ("holiday_spot", "pt", False, "Para onde ela viaja de folga no começo do ano?"),
        ("birthday", "en", False, "When should we bring her a cake?"),
        ("start_date", "en", False, "How long has she been with the company?"),
        ("shoe_size", "pt", False, "Que número de sapato ela usa?"),
        ("badge", "en", True, "What's her pass number for the building?"),
        ("nickname", "pt", True, "Como os amigos a chamam?"),
        ("cat", "en", False, "What did she name her pet?"),
        ("sourdough", "pt", False, "Que nome ela deu ao fermento natural?"),
        ("doctor", "pt", False, "Quem é o clínico geral que a acompanha?"),
        ("running", "pt", False, "Ela pratica corrida?"),
        ("lunch", "pt", False, "A que horas ela costuma fazer a refeição do meio-dia?"),
        ("book_club", "en", False, "Does she belong to a literary circle?"),
        ("bedtime", "pt", False, "Ela é do tipo que vai para a cama cedo?"),
        ("pickup", "en", False, "Can I book her for a 5:30 pm call?"),
        ("travel", "pt", False, "Ela pode fazer uma viagem a Madrid na semana que vem?"),
        ("sunday", "en", True, "Will she answer a ping on Sunday?"),
        ("conference_budget", "en", True, "How much money does she get for conferences?"),
    ),
    "javier": (
        ("coffee", "es", False, "¿Qué pide en la pausa del café?"),
        ("football_club", "en", True, "Which football team does he support?"),
        ("favourite_dish", "es", True, "¿Cuál es su plato preferido?"),
        ("holiday_style", "es", False, "¿Le apetecería un viaje a Roma o a París?"),
        ("communication", "es", False, "¿Cómo prefiere que le contacten para algo urgente?"),
        ("knee", "en", False, "Has he had any sports injuries?"),
        ("lactose", "es", False, "¿Puede tomar leche?"),
        ("asthma", "es", False, "¿Tiene algún problema respiratorio?"),
        ("insomnia", "es", False, "¿Duerme mal en alguna época del año?"),
        ("partner", "en", False, "Who does he live with?"),
        ("parents", "es", True, "¿A qué se dedican su padre y su madre?"),
        ("siblings", "es", False, "¿Es hijo único?"),
        ("goddaughter", "es", False, "¿Tiene ahijados?"),
        ("role", "es", False, "¿En qué consiste su puesto?"),
        ("manager", "es", False, "¿Quién está por encima de él en el organigrama?"),
        ("fraud_report", "en", True, "What does he send to the finance people every week?"),
        ("mentoring", "en", False, "Is he coaching anyone on the team?"),
        ("hours", "es", False, "¿A qué hora empieza su jornada?"),
        ("sql_client", "en", False, "What does he use to query the database?"),
        (
            "spreadsheet",
            "en",
            True,
            "Does he have his own spreadsheet for closing the quarter?",
        ),
        ("phone", "es", True, "¿Tiene un Pixel o un iPhone de empresa?"),
        ("bi_tool", "es", False, "¿Con qué herramienta monta sus paneles de indicadores?"),
        ("home", "es", True, "en que zona de la ciudad vive?"),
        ("hometown", "en", False, "Where is he originally from?"),
        ("office", "es", False, "¿En qué sede de la empresa está?"),
        ("getaway", "es", False, "¿Adónde se escapa cuando hay puente?"),
        ("birthday", "es", True, "¿Cuándo es su cumple?"),
        ("tshirt_size", "en", True, "What size should I order for his company hoodie?"),
        ("tenure", "es", False, "¿Desde cuándo trabaja con nosotros?"),
        ("marathon", "en", False, "What's his best time over 42 km?"),
        ("nickname", "es", False, "¿Cómo le dicen sus colegas de confianza?"),
        ("dog", "es", True, "¿Cómo se llama su perra?"),
        ("bike", "en", False, "What's the nickname of his bicycle?"),
        ("podcast", "en", False, "Does he host a show of his own?"),
        ("nap", "es", False, "¿Duerme un rato después de comer el sábado?"),
        ("swimming", "en", False, "Which days does he go to the pool?"),
        ("audiobooks", "es", False, "¿Qué hace en el trayecto al trabajo?"),
        ("dinner", "en", True, "Would a 7 pm dinner suit him?"),
        ("quarter_end", "es", False, "¿Puede ir a Lisboa el 28 de junio?"),
        ("driving", "en", False, "Can he pick up the visitors from the airport by car?"),
        ("friday_focus", "es", False, "¿Le puedo poner una reunión un viernes después de comer?"),
        ("august_leave", "es", False, "¿En qué mes tiene que coger vacaciones?"),
    ),
    "tom": (
        ("tea", "en", False, "How does he like his cuppa?"),
        ("rugby", "es", False, "¿De qué equipo es aficionado?"),
        ("music", "en", False, "Would he enjoy an evening of fiddles and bodhráns?"),
        (
            "walking_meetings",
            "en",
            False,
            "Where does he prefer to hold catch-ups with his reports?",
        ),
        ("pastry", "pt", False, "Que doce devo levar para ele?"),
        ("gout", "en", False, "Is a seafood platter a good idea for his dinner?"),
        ("colour_blind", "en", False, "Anything to keep in mind when I make graphs for him?"),
        (
            "sleep_apnoea",
            "en",
            False,
            "Does he need any medical equipment overnight when travelling?",
        ),
        ("heart", "en", False, "Has he had any cardiac problems?"),
        ("wife", "pt", False, "A esposa dele trabalha em quê?"),
        ("children", "en", True, "Is Roisin his daughter?"),
        ("father", "en", False, "How's his dad doing?"),
        ("sister", "es", False, "¿Tiene familia en España?"),
        ("role", "en", False, "What does he do at the company?"),
        ("manager", "pt", False, "A quem ele responde?"),
        ("direct_reports", "en", True, "Are Marta and Javier in his team?"),
        ("review_board", "en", False, "Is he part of any design governance group?"),
        ("previous_job", "es", True, "¿Para qué empresa de pagos trabajó en Dublín?"),
        ("phone", "en", True, "Is his phone an iPhone?"),
        ("tracker", "en", True, "Which issue tracker does he live in?"),
        ("slides", "en", False, "Which presentation software does he prefer?"),
        ("ide", "de", False, "Programmiert er noch selbst?"),
        ("home", "en", True, "Is he based in Dun Laoghaire or in the city?"),
        ("hometown", "en", False, "Is he from a rural background?"),
        ("home_office", "en", False, "Where does he take calls from when working remotely?"),
        ("summer", "en", True, "Where is the family's caravan?"),
        ("birthday", "de", False, "Wann hat er Geburtstag?"),
        ("anniversary", "en", False, "When did he and Aoife tie the knot?"),
        ("handicap", "en", True, "How good a golfer is he?"),
        ("employee_id", "pt", False, "Qual é o número de funcionário dele?"),
        ("nickname", "en", False, "What did people at his earlier jobs dub him?"),
        ("irish_name", "en", True, "How is his name written in Gaelic?"),
        ("dog", "es", True, "¿Cómo se llama el perro de la familia?"),
        ("cardiologist", "en", False, "Who is his heart specialist?"),
        ("pier_walk", "en", False, "What's the first thing he does each day?"),
        ("golf", "en", True, "How does he spend Saturday mornings?"),
        ("newspaper", "en", False, "Does he still get a physical broadsheet at the weekend?"),
        ("cooking", "en", False, "Who makes the evening meal in his house?"),
        ("wednesdays", "es", False, "¿Por qué se va pronto los miércoles?"),
        ("travel_days", "en", False, "Could he fly out on a Monday for the offsite?"),
        ("call_cutoff", "en", False, "Is 7 pm too late to ring him?"),
        (
            "july_offline",
            "pt",
            False,
            "Posso mandar-lhe uma mensagem durante as férias de julho?",
        ),
    ),
    "jonas": (
        ("coffee", "de", True, "Wie trinkt er seinen Kaffee am liebsten?"),
        ("music", "en", False, "What does he put on his headphones while coding?"),
        ("favourite_food", "de", False, "Womit kann man ihm eine Freude machen, wenn man kocht?"),
        ("holiday_style", "de", False, "Wie verbringt er gern seine freien Wochen?"),
        ("calls", "en", False, "Is it OK to just ring him?"),
        ("hay_fever", "de", False, "Hat er Probleme mit Pollen?"),
        ("back", "en", False, "Has he had trouble with his spine?"),
        ("tinnitus", "de", False, "Hat er etwas mit den Ohren?"),
        ("reading_glasses", "de", False, "Kann er Kleingedrucktes ohne Hilfe lesen?"),
        ("husband", "de", False, "Was macht sein Partner beruflich?"),
        ("nieces", "en", True, "Does he have any nieces or nephews?"),
        ("parents", "de", True, "Wo leben seine Eltern heute?"),
        ("brother", "de", False, "Was arbeitet sein jüngerer Bruder?"),
        ("role", "en", False, "What's his job title?"),
        ("manager", "de", False, "Wer ist sein Vorgesetzter?"),
        ("on_call", "de", False, "Wie oft muss er nachts erreichbar sein?"),
        ("project", "de", True, "Welches Projekt treibt er gerade voran?"),
        ("previous_job", "en", False, "Was he ever a railway man?"),
        ("editor", "de", True, "Ist er eher Vim- oder VS-Code-Nutzer?"),
        ("laptop", "de", False, "Auf welchem Notebook arbeitet er?"),
        ("shell", "en", False, "Which terminal setup does he use?"),
        ("passwords", "de", False, "Wo speichert er seine Zugangsdaten?"),
        ("home", "de", True, "In welcher Strasse wohnt er?"),
        ("hometown", "en", False, "Where did he spend his childhood?"),
        ("office", "de", False, "An welchem Standort ist er normalerweise?"),
        ("local_bar", "de", True, "In welche Kneipe geht er am liebsten?"),
        ("birthday", "de", False, "Wann wird er ein Jahr älter?"),
        ("wedding_anniversary", "en", True, "When did he and Felix get married?"),
        ("shoe_size", "de", False, "Wie groß sind seine Füße?"),
        ("extension", "de", False, "Unter welcher Durchwahl erreiche ich ihn?"),
        ("nickname", "en", False, "What do colleagues call him for short?"),
        (
            "surname_spelling",
            "en",
            True,
            "Why does he appear as Muller or Mueller in some databases?",
        ),
        ("cat", "de", False, "Hat er ein Haustier?"),
        ("home_server", "de", False, "Wie heißt der Rechner bei ihm zu Hause?"),
        ("bouldering", "de", False, "Welchen Sport treibt er regelmäßig?"),
        ("breakfast", "en", True, "Should I bring him something for breakfast?"),
        ("commute", "de", True, "Nimmt er das Auto ins Büro?"),
        ("sauna", "en", False, "What does he do to relax on Sundays?"),
        ("no_flying", "en", False, "Can we book him a plane ticket to Lisbon?"),
        ("language", "de", True, "Kann man mit ihm auf Spanisch reden?"),
        ("fridays", "de", False, "Arbeitet er an allen fünf Werktagen?"),
        ("prod_access", "en", False, "Can he query the live customer records right now?"),
    ),
    "amara": (
        ("tea", "en", False, "Should I get her a latte?"),
        ("music", "pt", True, "Ela ia gostar de um show de afrobeat?"),
        ("agendas", "en", False, "What does she expect to receive ahead of a sync?"),
        ("favourite_food", "en", False, "What meal would make her happy at a team dinner?"),
        ("films", "en", False, "What kind of movies does she like?"),
        ("blood_pressure", "en", False, "Is she on any pills for hypertension?"),
        ("eye_surgery", "de", False, "Trägt sie eine Brille?"),
        ("penicillin", "en", False, "Which antibiotic would be dangerous for her?"),
        ("tennis_elbow", "en", True, "Why does she have physio appointments?"),
        ("husband", "es", False, "¿A qué se dedica su marido?"),
        ("twins", "en", True, "Are her boys the same age?"),
        ("mother", "en", False, "Does her mum live nearby?"),
        ("brother", "pt", False, "O irmão dela trabalha com quê?"),
        ("role", "en", False, "What's her position here?"),
        ("manager", "de", False, "Wem berichtet sie?"),
        ("reports", "en", True, "Does Jonas Müller work under her?"),
        ("okr", "en", False, "What target is she chasing for the next three months?"),
        ("hiring", "es", False, "¿Está buscando gente para su equipo?"),
        ("laptop", "en", False, "What computer does she work on?"),
        ("diagrams", "en", False, "Which tool does she sketch system designs with?"),
        ("todo", "en", False, "Where does she track her tasks?"),
        ("calendar", "en", True, "How does she protect time for concentrated work?"),
        ("home", "pt", False, "Em que bairro de Londres ela mora?"),
        ("birthplace", "en", False, "What's her country of origin?"),
        ("office", "en", False, "Which site is she based at?"),
        ("easter", "en", True, "Where does she go for Easter?"),
        ("birthday", "es", False, "¿Cuándo cumple años?"),
        ("start_date", "en", False, "How many years has she been with us?"),
        ("run_pb", "en", False, "How quick is she over ten kilometres?"),
        ("age", "de", False, "Wie alt ist sie?"),
        ("nickname", "en", True, "Is there a short name her friends use?"),
        ("pronunciation", "en", False, "How do I say her last name properly?"),
        ("dog", "en", True, "What's her sausage dog's name?"),
        ("assistant", "pt", False, "Quem é a secretária dela?"),
        ("tennis", "en", True, "What does she do on Wednesday nights?"),
        ("journal", "en", False, "Does she jot down thoughts before sleep?"),
        ("desk_lunch", "es", False, "¿Sale a comer fuera a mediodía?"),
        ("choir", "en", False, "Is she in any kind of vocal group?"),
        ("school_run", "en", False, "Can I put an 8:30 call in her diary?"),
        ("passport", "de", False, "Kann sie im April zur Konferenz nach Lissabon fliegen?"),
        ("meeting_length", "en", False, "Is a two-hour workshop with her realistic?"),
        ("spend_limit", "en", False, "How big a purchase can she sign off on her own?"),
    ),
    "ines": (
        ("coffee", "pt", False, "Que café ela pede de manhã?"),
        ("music", "en", True, "Would she like tickets to a fado concert?"),
        ("football_club", "pt", True, "De que clube é ela adepta?"),
        ("favourite_dish", "pt", False, "Que sanduíche ela adora?"),
        ("contact", "en", True, "Should I email her or message her on her phone?"),
        ("pregnancy", "pt", False, "Ela está à espera de bebé?"),
        ("fructose", "en", False, "Can she eat a fruit salad for dessert?"),
        ("scoliosis", "pt", False, "Ela tem algum problema nas costas?"),
        ("cat_allergy", "pt", True, "Posso levá-la a uma casa com gatos?"),
        ("partner", "pt", False, "Onde trabalha o namorado dela?"),
        ("grandmother", "en", False, "Does an elderly relative live with her?"),
        ("brother", "pt", True, "O que faz o irmão caçula?"),
        ("father", "en", False, "What does her dad do?"),
        ("role", "pt", False, "Qual é a profissão dela?"),
        ("manager", "es", False, "¿Quién es su superior?"),
        ("team_size", "pt", False, "O grupo que ela chefia é grande?"),
        ("specialty", "pt", False, "Em que tipo de doentes ela é especialista?"),
        ("shifts", "pt", False, "Qual é o horário dela?"),
        (
            "booking",
            "en",
            False,
            "Which system does she schedule patient appointments in?",
        ),
        (
            "tablet",
            "pt",
            True,
            "Que aparelho ela usa para mostrar os exercícios aos pacientes?",
        ),
        ("rota", "pt", False, "Onde é que ela organiza os turnos do pessoal?"),
        ("strava", "en", False, "Which app logs her walks?"),
        ("home", "pt", True, "Em que zona do Porto ela mora?"),
        ("birthplace", "es", False, "¿Dónde nació?"),
        ("august", "pt", True, "Onde ela passa agosto?"),
        ("pilates", "pt", True, "Onde é que ela faz as aulas de pilates?"),
        ("birthday", "pt", False, "Quando é o aniversário dela?"),
        ("leave_start", "en", True, "When does her maternity leave begin?"),
        ("licence_number", "pt", True, "qual e o numero da carteira profissional dela?"),
        ("tenure", "en", True, "How long has she been with Lumen?"),
        ("nickname", "pt", False, "Como é que a equipa lhe chama?"),
        ("baby_name", "pt", False, "Já escolheram nome para a criança?"),
        ("dog", "en", True, "What kind of dog does she have?"),
        ("obstetrician", "pt", False, "Quem acompanha a gravidez dela?"),
        ("evening_walk", "pt", False, "Ela dá algum passeio ao entardecer?"),
        ("reading", "en", False, "Does she prefer e-books or paper?"),
        ("meal_prep", "pt", False, "Ela deixa as marmitas feitas com antecedência?"),
        ("lunch", "pt", True, "A que horas ela almoça?"),
        ("no_driving", "pt", False, "Ela tem carro? Pode dar boleia a alguém?"),
        ("xray", "en", False, "Can she assist with radiography today?"),
        ("wednesdays", "pt", True, "Porque é que ela sai mais cedo à quarta-feira?"),
        ("language", "de", False, "Kann ich mit ihr Deutsch sprechen?"),
    ),
    "klara": (
        ("tea", "en", False, "What hot drink does she prefer?"),
        ("music", "de", False, "Was läuft bei ihr im Hintergrund, wenn sie Statistik macht?"),
        ("favourite_dish", "de", False, "Welche Süßspeise isst sie am liebsten?"),
        ("minutes", "en", False, "What does she want sent round after a call?"),
        (
            "fixed_desk",
            "de",
            False,
            "Darf man ihr einen beliebigen freien Schreibtisch zuweisen?",
        ),
        ("wheelchair", "en", False, "Does she have a mobility impairment?"),
        (
            "wasp_allergy",
            "de",
            False,
            "Was passiert, wenn sie von einem Insekt gestochen wird?",
        ),
        ("thyroid", "en", False, "Does she take any hormone tablets?"),
        ("myopia", "de", False, "Wie schlecht sieht sie in die Ferne?"),
        ("husband", "en", True, "What does her husband do for work?"),
        ("daughter", "de", False, "Wo ist ihr Kind an der Uni?"),
        ("sister", "de", False, "Was macht ihre Schwester?"),
        ("mother", "en", False, "Is her mum in a care home?"),
        ("role", "de", False, "Was ist ihre Aufgabe in der Firma?"),
        ("manager", "de", True, "Wer leitet die Abteilung, in der sie arbeitet?"),
        ("knee_study", "en", False, "Which clinical trial is she analysing?"),
        ("phd", "de", False, "Wo hat sie promoviert?"),
        ("reviewer", "en", True, "Does she do peer review for any publication?"),
        ("stats_language", "en", True, "Which statistics software does she use?"),
        ("latex", "de", False, "Womit setzt sie ihre Veröffentlichungen?"),
        (
            "desktop",
            "de",
            False,
            "Ist auf ihrem Dienstcomputer Windows installiert?",
        ),
        ("zotero", "en", False, "Which reference manager does she use?"),
        ("home", "en", False, "Which Vienna district does she live in?"),
        ("hometown", "de", False, "Aus welcher Stadt kommt sie ursprunglich?"),
        ("office", "de", True, "In welcher Strasse arbeitet sie?"),
        ("summer", "de", False, "An welchem See ist sie in den warmen Monaten?"),
        ("birthday", "de", True, "In welchem Jahr ist sie geboren?"),
        ("staff_number", "en", False, "What's her HR reference code?"),
        ("married_since", "de", False, "Wie lange ist sie schon in der Ehe?"),
        ("phd_students", "en", False, "How many doctoral candidates does she supervise?"),
        ("given_name", "de", True, "Ist Klara ihr voller Vorname?"),
        ("maiden_name", "en", True, "Was her surname Weiss before she married?"),
        ("dog", "de", False, "Wie heißt ihr Hund?"),
        ("gp", "en", False, "Who is her family doctor?"),
        ("swimming", "de", False, "Treibt sie Sport vor Dienstbeginn?"),
        ("crime_novels", "en", True, "What genre of novels does she read?"),
        ("coffeehouse", "de", True, "Wie sieht ihr Sonntagmorgen aus?"),
        ("meditation", "en", False, "Does she do any mindfulness practice?"),
        ("part_time", "de", True, "Kann ich sie am Mittwoch anrufen?"),
        (
            "step_free",
            "de",
            False,
            "Können wir das Treffen im Dachgeschoss ohne Aufzug machen?",
        ),
        (
            "patient_data",
            "en",
            False,
            "Is she allowed to copy medical records to her notebook?",
        ),
        ("language", "pt", True, "Posso mandar-lhe o relatório em português?"),
    ),
    "sofia": (
        ("coffee", "en", False, "What's her favourite hot drink in the morning?"),
        ("spicy", "es", False, "¿Aguanta bien el chile?"),
        ("music", "es", True, "¿Le regalo un disco de boleros o de rock?"),
        ("flowers", "pt", True, "Que flores devo mandar no aniversário dela?"),
        ("standups", "es", False, "¿Cómo le gusta que sean los encuentros del equipo?"),
        ("anxiety", "en", False, "Does she take anything for her nerves?"),
        ("shellfish", "es", False, "¿Puede comer gambas?"),
        ("hearing_aid", "pt", False, "Ela ouve bem?"),
        ("braces", "es", True, "¿Lleva aparato en los dientes?"),
        ("wife", "en", False, "Is she married?"),
        ("son", "es", False, "¿Qué edad tiene su chico?"),
        ("father", "es", False, "¿Cómo está de salud su padre?"),
        ("sister", "en", False, "Does she have a sibling in Canada?"),
        ("role", "pt", False, "Qual é o cargo dela?"),
        ("manager", "es", False, "¿A quién rinde cuentas?"),
        ("clinics", "en", False, "How many sites is she responsible for?"),
        ("ethics", "es", False, "¿Participa en algún comité del área de investigación?"),
        ("previous_job", "en", True, "Has she run hospitals before?"),
        ("notion", "es", True, "¿Qué aplicación usa para organizarse?"),
        ("phones", "pt", False, "Quantos telemóveis ela tem?"),
        ("power_bi", "en", True, "Which dashboard tool does she check clinic KPIs in?"),
        ("deepl", "es", True, "¿Qué usa para traducir al portugués?"),
        ("home", "es", False, "¿Dónde tiene su casa?"),
        ("hometown", "pt", False, "De que cidade do México ela é?"),
        ("office", "es", True, "¿En qué oficina trabaja?"),
        ("christmas", "en", False, "Where does she spend the December holidays?"),
        ("birthday", "es", True, "cuando es su cumpleanos?"),
        ("arrival", "en", True, "How long has she lived in Portugal?"),
        ("age", "es", False, "¿Qué edad tiene?"),
        ("budget", "en", False, "How much money does she oversee each year?"),
        ("family_nickname", "es", False, "¿Qué apodo le pusieron en casa?"),
        ("cats", "en", False, "Does she have pets?"),
        ("assistant", "en", True, "Who is her assistant?"),
        ("full_name", "en", True, "What is her middle name?"),
        ("yoga", "es", True, "¿Qué hace cada mañana al levantarse?"),
        ("mole", "en", False, "Does she cook for colleagues on any special occasion?"),
        ("email_batches", "es", True, "¿Cuándo revisa el email?"),
        ("friday_series", "es", False, "¿Qué hace con Mateo al final de la semana?"),
        ("home_fridays", "en", True, "Will she be in the office on Friday?"),
        ("signing_limit", "es", False, "¿Puede aprobar ella sola un acuerdo de ochenta mil?"),
        ("evening_cutoff", "es", False, "¿Le puedo poner una llamada a las siete de la tarde?"),
        (
            "data_residency",
            "es",
            True,
            "¿Puede mandar datos de pacientes a un socio en México?",
        ),
    ),
}

QUESTIONS: list[Question] = [
    Question(text, person, key, lang, shares)
    for person, rows in _ASKED.items()
    for key, lang, shares, text in rows
]

_OFF = {
    "marta": (
        ("pt", "Qual é a capital do Peru?"),
        ("pt", "Ela tem barco?"),
        ("en", "Does she play chess?"),
        ("pt", "Ela coleciona selos?"),
        ("pt", "Quanto custa uma passagem para Tóquio?"),
        ("en", "What's the weather like in Oslo tomorrow?"),
        ("es", "¿Tiene tatuajes?"),
    ),
    "javier": (
        ("es", "¿Cuál es la capital de Australia?"),
        ("es", "¿Toca algún instrumento?"),
        ("en", "Does he own a boat?"),
        ("es", "¿Ha estado alguna vez en Japón?"),
        ("en", "How do I reset my router?"),
        ("es", "¿Le gusta el ajedrez?"),
        ("en", "Who won the Tour de France in 2015?"),
    ),
    "tom": (
        ("en", "Does he keep a boat in the harbour?"),
        ("en", "Is he into video games?"),
        ("es", "¿Tiene moto?"),
        ("en", "What's the tallest mountain in Ireland?"),
        ("de", "Wie viele Einwohner hat Irland?"),
        ("en", "Has he ever been skydiving?"),
        ("pt", "Ele fala japonês?"),
    ),
    "jonas": (
        ("de", "Hat er ein Segelboot?"),
        ("de", "Wie hoch ist die Zugspitze?"),
        ("de", "Spielt er Schach?"),
        ("de", "Wer hat 1954 die Fußball-WM gewonnen?"),
        ("en", "Is he into astronomy?"),
        ("de", "Hat er einen Motorradführerschein?"),
        ("en", "Explain how a hash map works"),
    ),
    "amara": (
        ("en", "Does she own a horse?"),
        ("en", "What's the capital of Peru?"),
        ("en", "Has she ever climbed Kilimanjaro?"),
        ("pt", "Ela joga xadrez?"),
        ("en", "What's 17 times 23?"),
        ("en", "Does she knit?"),
        ("de", "Hat sie einen Segelschein?"),
    ),
    "ines": (
        ("pt", "Ela coleciona discos de vinil?"),
        ("pt", "Quem ganhou o Euro 2016?"),
        ("pt", "Ela joga golfe?"),
        ("en", "Does she have a tattoo?"),
        ("pt", "Como se faz pão de ló?"),
        ("en", "What time is sunset in Porto today?"),
        ("es", "¿Sabe esquiar?"),
    ),
    "klara": (
        ("de", "Hat sie ein Pferd?"),
        ("de", "Wie hoch ist der Großglockner?"),
        ("en", "Does she own a motorbike?"),
        ("de", "Was kostet ein Kilo Äpfel?"),
        ("en", "Has she been to Antarctica?"),
        ("de", "Sammelt sie Briefmarken?"),
        ("de", "Wie funktioniert ein Kühlschrank?"),
    ),
    "sofia": (
        ("es", "¿Tiene barco?"),
        ("es", "¿Juega al golf?"),
        ("en", "What's the population of Lima?"),
        ("es", "¿Sabe tocar la guitarra?"),
        ("en", "Does she paint?"),
        ("es", "¿Quién escribió Cien años de soledad?"),
        ("pt", "Ela pratica escalada?"),
    ),
}

OFF_TOPIC: list[OffTopic] = [
    OffTopic(text, person, lang) for person, rows in _OFF.items() for lang, text in rows
]
