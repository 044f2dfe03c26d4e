"""Views built as plain functions of data (no Gradio).

The SEG graph as HTML (:mod:`.graph`), the leaderboard's significance panel (:mod:`.significance_view`)
and its cost view (:mod:`.cost_view`).
"""
