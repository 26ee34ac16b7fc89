import { adminPaths } from './admin-paths.js';
import { errorResponseComponents, schemaComponents } from './components.js';
import { publicPaths } from './public-paths.js';

/**
 * The OpenAPI 3.1 document of edge, built once from the JSON Schemas the request validators
 * compile (contracts' TypeBox schemas and edge's own): the document cannot drift from what is
 * enforced.
 */
export function buildOpenApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Inference Gateway',
      version: '1.0.0',
      description:
        'Prepaid inference gateway billed in DZD. Every error is ' +
        '`{"error": {"message", "type": "service_error", "code", "param"?}}`.',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    paths: { ...publicPaths(), ...adminPaths() },
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key, or a scoped token (`jwt:...`).',
        },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The operator token.' },
      },
      schemas: schemaComponents(),
      responses: errorResponseComponents(),
    },
  };
}
