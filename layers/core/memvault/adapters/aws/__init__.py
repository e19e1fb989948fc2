"""The AWS backend: DynamoDB + S3 for notes, keys, budgets and the ledger; OpenSearch for search."""
