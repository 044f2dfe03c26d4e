"""The lines of script the page runs in the browser: downloads, a row click's follow-ups, open panels.

Plain strings, given to Gradio's ``js=`` by :class:`~ts2viz.ui.glue.events.Page`.
"""
from __future__ import annotations

# Save a dataframe / figure in a download: a click makes the file on the server, then the browser
# saves it (one click; nothing is written before a visitor asks).
DOWNLOAD_JS = """(f) => {
  if (f && f.url) {
    const a = document.createElement('a');
    a.href = f.url; a.download = f.orig_name || 'ts2viz.csv';
    document.body.appendChild(a); a.click(); a.remove();
  }
  return [];
}"""


# After a row click opened a SEG: on a narrow window (the layout's columns stacked), scroll to the SEG's header.
SHOW_SEG_ON_PHONE_JS = """() => {
  if (window.innerWidth <= 640) {
    setTimeout(() => document.querySelector('#seg-header')?.scrollIntoView({block: 'start'}), 300);
  }
  return [];
}"""


# After a row of a table opened a SEG: leave no cell of the page's tables selected (Gradio's Dataframe keeps
# the clicked cell outlined, with its "select row / column" buttons, until a click lands outside the table:
# a click on the page's body is one) and give the focus back to the page (issue 40 item 17).
CLEAR_TABLE_SELECTION_JS = """() => {
  requestAnimationFrame(() => {
    const a = document.activeElement;
    if (a && a.closest('[role="grid"], table')) { a.blur(); }
    document.body.click();
  });
  return [];
}"""


# Which panels the page shows (Page.track_open / Page.while_open): a flag per panel, in the page.
OPEN_FLAG_JS = """() => { (window.ts2vizOpen = window.ts2vizOpen || {})[%s] = %s; return []; }"""
# While the panel is open, click the hidden button whose click runs the panel's server event.
CLICK_IF_OPEN_JS = """() => {
  if ((window.ts2vizOpen || {})[%s]) {
    const el = document.getElementById(%s);
    const b = el && (el.tagName === 'BUTTON' ? el : el.querySelector('button'));
    if (b) { b.click(); }
  }
  return [];
}"""
