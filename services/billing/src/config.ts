import { Type } from '@sinclair/typebox';
import { fields, serviceFields } from '@gateway/config';

export const billingConfigSchema = Type.Object({
  ...serviceFields(8081),
  DATABASE_URL: fields.postgresUrl(),
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
});
