"""The SEG explorer tab's callbacks: picking a SEG, the failure finder, and the view of one SEG.

Picking a SEG (search, partition), the failure finder, and the view of one SEG (graph, walks, node
galleries, node-wise CDF/KS).

One module each: :mod:`.picking` (picking a SEG, the failure finder), :mod:`.walks` (a SEG's walks),
:mod:`.nodes` (its nodes side by side) and :mod:`.view` (the view of one SEG, and what a click redraws).
"""
