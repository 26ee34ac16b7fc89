import { routeParamNames, routeStatus, routeTemplate } from '@gateway/contracts';
import { ADMIN_ROUTES, type AdminRoute } from '../admin/admin-routes.js';
import { errors, json, ref } from './components.js';

const openApiPath = (route: AdminRoute) => `/admin/v1${routeTemplate(route)}`;

const pathParameters = (route: AdminRoute) =>
  routeParamNames(route).map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));

/** The operator API, from the same route table the admin router mounts. */
export function adminPaths(): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ADMIN_ROUTES) {
    const status = String(routeStatus(route));
    const operation: Record<string, unknown> = {
      summary: route.summary,
      tags: ['operator'],
      security: [{ adminToken: [] }],
      parameters: pathParameters(route),
      responses: {
        [status]:
          status === '204'
            ? { description: 'Done' }
            : {
                description: 'Result',
                content: json(route.answer ? ref(String(route.answer.$id)) : { type: 'object' }),
              },
        ...errors(
          400,
          401,
          404,
          405,
          409,
          ...(route.refusals?.includes(429) ? [429] : []),
          500,
          503,
        ),
      },
    };
    if (route.body) {
      operation.requestBody = { required: true, content: json(ref(String(route.body.$id))) };
    }
    (paths[openApiPath(route)] ??= {})[route.method.toLowerCase()] = operation;
  }
  return paths;
}
