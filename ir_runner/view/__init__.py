"""``ir-run view``: an IR in Google's Model Explorer, with ir-run's findings laid over it as node data.

``graph_json`` maps an IR to Model Explorer's graph JSON and ``overlays`` turns ``validate``, ``crosscheck`` and
``bench --per-layer`` results into node data; neither needs Model Explorer. ``server`` starts Model Explorer
(the optional extra ``pip install 'ir-run[view]'``) and ``main`` is its adapter extension for ``.xml`` files
(``model-explorer model.xml --extensions=ir_runner.view``). See docs/view.md.
"""
