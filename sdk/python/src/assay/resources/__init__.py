"""The REST namespaces of ``assay.Client``, one module each, named as the TypeScript client's
(src/client/resources/*.ts) in Python style."""
