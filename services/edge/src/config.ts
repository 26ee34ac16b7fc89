import { Type } from '@sinclair/typebox';
import { fields, serviceFields } from '@gateway/config';

export const edgeConfigSchema = Type.Object({
  ...serviceFields(8080),
  AMQP_URL: fields.amqpUrl(),
  AMQP_PREFIX: fields.amqpPrefix(),
  BILLING_URL: fields.httpUrl(),
});
