"""The HTTP application: the FastAPI app, request dependencies, schemas and error rendering."""
