"""Words that say nothing about what a fact is about, in the four languages memories are
written and asked in (English, Portuguese, Spanish, German), for the lexical rank of search.

A question in Portuguese, Spanish or German is mostly function words ("Wie lange ist sie
schon in der Ehe?"): matched as content, *ist*, *sie* and *der* find most of a German
person's facts and push the answer out. The lexical rank therefore drops every query word
that is a stop word in *any* of the four languages (search.CONTENT_WORDS), whatever the
language of the question: the cost is that a few English content words that are German or
Portuguese function words (*hat*, *war*, *den*, *era*) are not matched lexically; the
semantic rank still sees them.

The lists are the Snowball project's stop lists (as PostgreSQL ships them in
`tsearch_data/*.stop`), plus the question words and modal verbs they leave out, which every
question has. They are compared with the query's words as the `memory_simple_unaccent` text
search configuration spells them (lower case, accents removed: `plain`); tests/test_search.py
checks that the two spellings agree.
"""

import unicodedata

ENGLISH = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what
    which who whom this that these those am is are was were be been being have has had
    having do does did doing a an the and but if or because as until while of at by for
    with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how
    all any both each few more most other some such no nor not only own same so than too
    very s t can will just don should now
    would could shall might must may also us whose ever
"""

PORTUGUESE = """
    de a o que e do da em um para com não uma os no se na por mais as dos como mas ao
    ele das à seu sua ou quando muito nos já eu também só pelo pela até isso ela entre
    depois sem mesmo aos seus quem nas me esse eles você essa num nem suas meu às minha
    numa pelos elas qual nós lhe deles essas esses pelas este dele tu te vocês vos lhes
    meus minhas teu tua teus tuas nosso nossa nossos nossas dela delas esta estes estas
    aquele aquela aqueles aquelas isto aquilo estou está estamos estão estive esteve
    estivemos estiveram estava estávamos estavam estivera estivéramos esteja estejamos
    estejam estivesse estivéssemos estivessem estiver estivermos estiverem hei há
    havemos hão houve houvemos houveram houvera houvéramos haja hajamos hajam houvesse
    houvéssemos houvessem houver houvermos houverem houverei houverá houveremos houverão
    houveria houveríamos houveriam sou somos são era éramos eram fui foi fomos foram
    fora fôramos seja sejamos sejam fosse fôssemos fossem for formos forem serei será
    seremos serão seria seríamos seriam tenho tem temos tém tinha tínhamos tinham tive
    teve tivemos tiveram tivera tivéramos tenha tenhamos tenham tivesse tivéssemos
    tivessem tiver tivermos tiverem terei terá teremos terão teria teríamos teriam
    onde aonde quais quanto quanta quantos quantas porque porquê pra pro ser ter estar
"""

SPANISH = """
    de la que el en y a los del se las por un para con no una su al lo como más pero sus
    le ya o este sí porque esta entre cuando muy sin sobre también me hasta hay donde
    quien desde todo nos durante todos uno les ni contra otros ese eso ante ellos e esto
    mí antes algunos qué unos yo otro otras otra él tanto esa estos mucho quienes nada
    muchos cual poco ella estar estas algunas algo nosotros mi mis tú te ti tu tus ellas
    nosotras vosostros vosostras os mío mía míos mías tuyo tuya tuyos tuyas suyo suya
    suyos suyas nuestro nuestra nuestros nuestras vuestro vuestra vuestros vuestras esos
    esas estoy estás está estamos estáis están esté estés estemos estéis estén estaré
    estarás estará estaremos estaréis estarán estaría estarías estaríamos estaríais
    estarían estaba estabas estábamos estabais estaban estuve estuviste estuvo estuvimos
    estuvisteis estuvieron estuviera estuvieras estuviéramos estuvierais estuvieran
    estuviese estuvieses estuviésemos estuvieseis estuviesen estando estado estada
    estados estadas estad he has ha hemos habéis han haya hayas hayamos hayáis hayan
    habré habrás habrá habremos habréis habrán habría habrías habríamos habríais habrían
    había habías habíamos habíais habían hube hubiste hubo hubimos hubisteis hubieron
    hubiera hubieras hubiéramos hubierais hubieran hubiese hubieses hubiésemos hubieseis
    hubiesen habiendo habido habida habidos habidas soy eres es somos sois son sea seas
    seamos seáis sean seré serás será seremos seréis serán sería serías seríamos seríais
    serían era eras éramos erais eran fui fuiste fue fuimos fuisteis fueron fuera fueras
    fuéramos fuerais fueran fuese fueses fuésemos fueseis fuesen sintiendo sentido
    sentida sentidos sentidas siente sentid tengo tienes tiene tenemos tenéis tienen
    tenga tengas tengamos tengáis tengan tendré tendrás tendrá tendremos tendréis
    tendrán tendría tendrías tendríamos tendríais tendrían tenía tenías teníamos teníais
    tenían tuve tuviste tuvo tuvimos tuvisteis tuvieron tuviera tuvieras tuviéramos
    tuvierais tuvieran tuviese tuvieses tuviésemos tuvieseis tuviesen teniendo tenido
    tenida tenidos tenidas tened
    dónde adónde cuál cuáles cuánto cuánta cuántos cuántas cómo cuándo quién quiénes
    usted ustedes ser tener
"""

GERMAN = """
    aber alle allem allen aller alles als also am an ander andere anderem anderen
    anderer anderes anderm andern anderr anders auch auf aus bei bin bis bist da damit
    dann der den des dem die das daß derselbe derselben denselben desselben demselben
    dieselbe dieselben dasselbe dazu dein deine deinem deinen deiner deines denn derer
    dessen dich dir du dies diese diesem diesen dieser dieses doch dort durch ein eine
    einem einen einer eines einig einige einigem einigen einiger einiges einmal er ihn
    ihm es etwas euer eure eurem euren eurer eures für gegen gewesen hab habe haben hat
    hatte hatten hier hin hinter ich mich mir ihr ihre ihrem ihren ihrer ihres euch im
    in indem ins ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt
    kann kein keine keinem keinen keiner keines können könnte machen man manche manchem
    manchen mancher manches mein meine meinem meinen meiner meines mit muss musste nach
    nicht nichts noch nun nur ob oder ohne sehr sein seine seinem seinen seiner seines
    selbst sich sie ihnen sind so solche solchem solchen solcher solches soll sollte
    sondern sonst über um und uns unse unsem unsen unser unses unter viel vom von vor
    während war waren warst was weg weil weiter welche welchem welchen welcher welches
    wenn werde werden wie wieder will wir wird wirst wo wollen wollte würde würden zu
    zum zur zwar zwischen
    wann wer wen wem wessen warum wieso weshalb woher wohin womit wofür worüber welch
    dass gibt darf dürfen könnten müssen sollen
"""

LANGUAGES = {"en": ENGLISH, "pt": PORTUGUESE, "es": SPANISH, "de": GERMAN}


def plain(word: str) -> str:
    """A word as `memory_simple_unaccent` spells it: lower case, without accents (the
    `unaccent` dictionary's rules for the Latin letters these languages use)."""
    word = word.lower().replace("ß", "ss")
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


# Every stop word of the four languages, spelled as the lexical rank's query words are.
STOPWORDS: frozenset[str] = frozenset(
    plain(word) for words in LANGUAGES.values() for word in words.split()
)


def content_words(words) -> list[str]:
    """The words that are not stop words in any of the four languages (order kept)."""
    return [w for w in words if plain(w) not in STOPWORDS]
