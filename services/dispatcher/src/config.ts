import { Type } from '@sinclair/typebox';
import { fields, serviceFields } from '@gateway/config';

export const dispatcherConfigSchema = Type.Object({
  ...serviceFields(8083),
  DATABASE_URL: fields.postgresUrl(),
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
  AMQP_URL: fields.amqpUrl(),
  AMQP_PREFIX: fields.amqpPrefix(),
});
