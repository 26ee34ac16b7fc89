// A unit test runs without the servers: remove their addresses, so a test that reaches for
// PostgreSQL or RabbitMQ fails with the testing package's "is not set" error instead of passing
// in the full run (where the global setup has set them) and failing in `pnpm test:unit`.
for (const name of Object.keys(process.env)) {
  if (name.startsWith('GATEWAY_TEST_')) delete process.env[name];
}
