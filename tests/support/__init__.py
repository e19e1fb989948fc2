"""What tests and benchmarks share: a fake clock, servers, the AWS and OpenSearch test
environment, the scripted upstream model provider and reference queries."""
