"""The core templates (``af_core/codegen/templates``) compiled to Python by jinja2, one module each.

``tools/compile_templates.py`` writes them; ``af_core.codegen.jinja`` runs one only while it holds its
template's current text and was compiled by the installed jinja2's version. Nothing here is edited by
hand.
"""
