import { randomBytes } from 'node:crypto';
import type { RabbitMqNode } from './rabbitmq.js';

export interface TestBrokerUser<S extends string = string> {
  service: S;
  name: string;
  password: string;
  /** The node's AMQP URL with this user's credentials. */
  url: string;
}

/**
 * One user per service on the node or cluster (`test-<service>`, a random password), created with the
 * definitions `definitionsFor` builds from them (their permissions: `brokerDefinitions` of
 * `@gateway/messaging`, which this package cannot import). One `rabbitmqctl` call.
 * Resolves with each service's AMQP URL.
 */
export async function addTestBrokerUsers<S extends string>(
  node: Pick<RabbitMqNode, 'url' | 'importDefinitions'>,
  services: readonly S[],
  definitionsFor: (users: TestBrokerUser<S>[]) => object,
): Promise<Record<S, string>> {
  const users = services.map((service) => {
    const name = `test-${service}`;
    const password = randomBytes(16).toString('hex');
    const url = new URL(node.url);
    url.username = name;
    url.password = password;
    return { service, name, password, url: url.toString().replace(/\/$/, '') };
  });
  await node.importDefinitions(definitionsFor(users));
  return Object.fromEntries(users.map((user) => [user.service, user.url])) as Record<S, string>;
}
