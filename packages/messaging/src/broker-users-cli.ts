/**
 * `node node_modules/@gateway/messaging/dist/broker-users-cli.js` (in any service image):
 * creates or updates each service's RabbitMQ user with its password and exactly its permissions
 * (broker-access.ts), through the management API, then exits (0 on success, 1 on failure).
 * Idempotent: run it before each rollout (compose's `rabbitmq-users`, the Job
 * `gateway-broker-users`). `--print` writes the definitions document to stdout instead (for
 * `rabbitmqctl import_definitions` or the management UI's import); it holds password hashes.
 *
 * Environment: RABBITMQ_MANAGEMENT_URL (http(s)://admin:password@host:15672, an administrator),
 * EDGE_AMQP_URL, INFERENCE_WORKER_AMQP_URL, BILLING_AMQP_URL, DISPATCHER_AMQP_URL (each
 * service's own AMQP_URL: the user, its password and the vhost), AMQP_PREFIX (the services').
 */
import { applyBrokerUsers, brokerUsersPlan, planDefinitions } from './broker-users.js';

const log = (level: string, msg: string, fields: object = {}) =>
  process.stdout.write(`${JSON.stringify({ level, msg, ...fields })}\n`);

try {
  const plan = brokerUsersPlan(process.env);
  if (process.argv.includes('--print')) {
    process.stdout.write(`${JSON.stringify(planDefinitions(plan), null, 2)}\n`);
  } else {
    await applyBrokerUsers(plan);
    const users = plan.users.map(({ service, name }) => ({ service, name }));
    log('info', 'broker users provisioned', { vhost: plan.vhost, prefix: plan.prefix, users });
  }
} catch (error) {
  log('fatal', 'broker users not provisioned', { err: (error as Error).message });
  process.exitCode = 1;
}
