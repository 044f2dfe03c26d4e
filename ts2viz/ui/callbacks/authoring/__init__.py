"""The authoring tab's callbacks: build SEGs in a session, see their problems, score and export them.

Build SEGs in a session (prompt, images, nodes with their error descriptions, edges), see every problem
the dataset loader would find, score the SEG being built, and export / import / push the session's
SEGs as a dataset in ts2viz's format.

Plain functions of data (the session's :class:`~ts2viz.ui.state.app_state.AppView` first), on the
session's :class:`~ts2viz.ui.state.authoring_session.Drafts`; the SEG logic is
:mod:`ts2viz.authoring`'s. Each action returns a one-line message (shown in the tab's message box, or
its error there); :func:`~ts2viz.ui.callbacks.authoring.view.authoring_state` gives what the tab shows after it.

Public mode (``app.access.public``): images come only as uploads through the page (checked as the live
scoring tab checks them, :func:`~ts2viz.ui.callbacks.live.check_upload`, within the session's caps),
folders and paths are refused, file names are made by the server from sanitised names, a dataset
comes in as a checked .zip upload and goes out as a .zip download in the session's own folder; all of
it goes with the session.

One module per part of the work, each importing only those before it: :mod:`.drafts` (start, pick, remove,
undo a SEG; its header), :mod:`.images` (uploads and folders, assigned to nodes), :mod:`.nodes` (nodes and
edges), :mod:`.view` (what the tab shows), :mod:`.scoring` (the SEG being built, scored) and
:mod:`.transfer` (export, import, push).
"""
