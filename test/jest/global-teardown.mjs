export default async function globalTeardown() {
  await globalThis.__gatewayInfra?.stop();
}
