"""The web dashboard: the built single-page app (``static/``) and the routes that serve it."""
