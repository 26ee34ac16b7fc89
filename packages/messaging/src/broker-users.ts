import { BROKER_SERVICES, brokerDefinitions } from './broker-access.js';
import type { BrokerDefinitions, BrokerService, BrokerUser } from './broker-access.js';

/*
 * Provisioning of the services' broker users (broker-users-cli.ts): compose's `rabbitmq-users`
 * one-shot and the Kubernetes Job `gateway-broker-users` run it with the services' own AMQP
 * URLs, so a service's credential and its user come from one value.
 */

/** The variable holding each service's AMQP_URL (its user, password and vhost). */
export const SERVICE_URL_VARIABLES: Record<BrokerService, string> = {
  edge: 'EDGE_AMQP_URL',
  'inference-worker': 'INFERENCE_WORKER_AMQP_URL',
  billing: 'BILLING_AMQP_URL',
  dispatcher: 'DISPATCHER_AMQP_URL',
};

export interface BrokerUsersPlan {
  /** The management API's base URL, without credentials. */
  managementUrl: string;
  /** `Basic …` for the management API (an administrator's user and password). */
  authorization: string;
  vhost: string;
  prefix: string;
  users: BrokerUser[];
}

/** What to create, from the environment; throws naming the variable that is wrong. */
export function brokerUsersPlan(env: NodeJS.ProcessEnv): BrokerUsersPlan {
  const management = parseUrl(env, 'RABBITMQ_MANAGEMENT_URL', ['http:', 'https:']);
  const admin = credentials(management, 'RABBITMQ_MANAGEMENT_URL');
  const vhosts = new Set<string>();
  const users = BROKER_SERVICES.map((service) => {
    const variable = SERVICE_URL_VARIABLES[service];
    const url = parseUrl(env, variable, ['amqp:', 'amqps:']);
    const raw = url.pathname.slice(1);
    vhosts.add(raw ? decodeURIComponent(raw) : '/');
    const { name, password } = credentials(url, variable);
    if (name === admin.name) {
      throw new Error(`${variable}: the management user cannot be a service's user`);
    }
    return { service, name, password };
  });
  if (vhosts.size !== 1) throw new Error('the services must share one vhost');
  if (new Set(users.map((u) => u.name)).size !== users.length) {
    throw new Error('each service needs a broker user of its own');
  }
  const base = new URL(management.href);
  base.username = '';
  base.password = '';
  const token = Buffer.from(`${admin.name}:${admin.password}`).toString('base64');
  return {
    managementUrl: base.href.replace(/\/$/, ''),
    authorization: `Basic ${token}`,
    vhost: [...vhosts][0]!,
    prefix: env.AMQP_PREFIX ?? '',
    users,
  };
}

export function planDefinitions(plan: BrokerUsersPlan): BrokerDefinitions {
  return brokerDefinitions({ users: plan.users, vhost: plan.vhost, prefix: plan.prefix });
}

/**
 * Posts the definitions to the management API (`POST /api/definitions`: creates or updates the
 * users and their permissions, nothing else), retrying while the broker is still starting.
 */
export async function applyBrokerUsers(
  plan: BrokerUsersPlan,
  options: { attempts?: number; pauseMs?: number } = {},
): Promise<void> {
  const attempts = options.attempts ?? 30;
  const body = JSON.stringify(planDefinitions(plan));
  let last = '';
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    try {
      const response = await fetch(`${plan.managementUrl}/api/definitions`, {
        method: 'POST',
        headers: { Authorization: plan.authorization, 'Content-Type': 'application/json' },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      if (response.ok) return;
      last = `HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`;
      // A refusal (bad credentials, a missing vhost, a bad pattern) will not change.
      if (response.status < 500) break;
    } catch (error) {
      last = (error as Error).message;
    }
    if (attempt < attempts) await new Promise((r) => setTimeout(r, options.pauseMs ?? 2_000));
  }
  throw new Error(`the management API did not take the definitions: ${last}`);
}

function parseUrl(env: NodeJS.ProcessEnv, variable: string, protocols: string[]): URL {
  const value = env[variable];
  if (!value) throw new Error(`${variable} is required`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${variable} is not a URL`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new Error(`${variable} must be ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  return url;
}

function credentials(url: URL, variable: string): { name: string; password: string } {
  const name = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  if (!name || !password) throw new Error(`${variable} must name a user and a password`);
  return { name, password };
}
