"""The app's state: what the operator loaded, and each session's own data.

What the operator loaded and each session's own data (:mod:`.app_state`), the memo of views
(:mod:`.memo`), one workspace per browser session (:mod:`.sessions`), the disk budget of sessions
(:mod:`.disk`), and a session's SEG drafts (:mod:`.authoring_session`), rated-set score uploads
(:mod:`.gold_session`) and nuisance results (:mod:`.nuisance_session`).
"""
