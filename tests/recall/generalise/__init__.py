"""A held-out recall evaluation: a small world of eight people, what is on file about them,
and questions an agent might ask about each person in other words than the fact.

What it holds:

- people.py: the world (two tenants, four teams, eight actors) and 336 personal facts, each
  marked with its kind (preference, health, family, work, tool, place, date_number, name,
  habit, constraint) and language (en, pt, es, de), plus 60 wider-scope facts (team, tenant
  and global) that act as distractors: some on the same keys as personal facts, so that
  precedence matters, and some worded like another person's personal fact.
- background.py: the everyday work notes around those facts (tickets, promised answers,
  drafts; customers, incidents, runbooks), generated deterministically, so that each chain
  holds about 310 rows as a real one does; they say nothing about anyone's life and answer
  no question.
- questions.py: one question per personal fact (the expected key is unambiguous within that
  person's facts), each flagged for whether it shares a content word with its fact, in
  English, Portuguese, Spanish and German, including English questions about facts written
  in another language and the other way round; and off-topic questions per person that
  nothing on file answers and that should bring back little.
- split.py: DEV and TEST, split once, deterministically (a stable hash of the question
  text, stratified by question language, kind of fact and word sharing), half each, and the
  off-topic questions likewise by language.

The rule: tune on DEV only. TEST exists to tell whether a change generalises, so its
individual failures must never be looked at, listed or printed while tuning anything
(weights, thresholds, stopwords, prompts, embedder choice); report only its aggregate figures.
The split must not be redrawn and the data must not be edited to move the numbers. All of it
was written fresh for this set; none of it repeats tests/recall/cases.py.
"""
