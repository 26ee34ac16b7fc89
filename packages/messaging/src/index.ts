export {
  BusError,
  DEFAULT_DRAIN_TIMEOUT_MS,
  silentLogger,
  type BusErrorCode,
  type BusLogger,
  type ConsumeOptions,
  type Consumer,
  type DeclareQueueOptions,
  type Delivery,
  type Destination,
  type Handler,
  type MessageBus,
  type Outcome,
  type PublishOptions,
} from './bus.js';
export {
  BROKER_SERVICES,
  brokerDefinitions,
  brokerPermissions,
  rabbitPasswordHash,
  serviceTopology,
  type BrokerDefinitions,
  type BrokerPermission,
  type BrokerService,
  type BrokerUser,
  type PrefixOption,
  type ServiceBrokerAccess,
  type TopicPermission,
} from './broker-access.js';
export { DEFAULT_MAX_MESSAGE_BYTES, MAX_HEADERS, MAX_PREFETCH } from './envelope.js';
export { createInProcessBus, type InProcessBusOptions } from './in-process-bus.js';
export { createGatewayBus, createRabbitMqBus, type RabbitMqBusOptions } from './rabbitmq-bus.js';
export {
  DEAD_LETTER_EXCHANGE,
  DEFAULT_DEAD_LETTER_RETENTION,
  EXCHANGES,
  QUEUES,
  QUEUE_NAME_EXCHANGE,
  ROUTING_KEYS,
  cancelQueueName,
  deadQueueName,
  gatewayNames,
  gatewayTopology,
  replyQueueName,
  retryQueueName,
  type Binding,
  type DeadLetterRetention,
  type GatewayNames,
  type QueueSpec,
  type Topology,
} from './topology.js';
export {
  DEFAULT_MAX_DELIVERIES,
  DEFAULT_MAX_RETRIES,
  planTopology,
  type QueueDeclaration,
  type TopologyPlan,
} from './topology-plan.js';
export { traceBus } from './traced-bus.js';
