import { Type } from '@sinclair/typebox';
import { fields, serviceFields } from '@gateway/config';

export const workerConfigSchema = Type.Object({
  ...serviceFields(8082),
  AMQP_URL: fields.amqpUrl(),
  AMQP_PREFIX: fields.amqpPrefix(),
  BILLING_URL: fields.httpUrl(),
});
