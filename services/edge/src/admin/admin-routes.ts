import type { TSchema } from '@sinclair/typebox';
import { OPERATOR_ROUTES, type OperatorRoute } from '@gateway/contracts';

/**
 * One operator route as edge serves it: the contract's route (`OPERATOR_ROUTES`), and what edge
 * does around it before relaying.
 */
export interface AdminRoute extends OperatorRoute {
  /**
   * The dispatcher knows no accounts: edge first asks billing whether the account (`:id`)
   * exists, so a typo cannot create secrets for nobody.
   */
  accountMustExist: boolean;
  /** The answer is an owner invitation: edge adds its link (`url`) on the public origin. */
  invitationLink: boolean;
}

/**
 * The operator API as edge mounts it (and its OpenAPI document lists it), from the contract;
 * `answer` is what edge answers (the public answer where edge adds to the service's).
 */
export const ADMIN_ROUTES: readonly AdminRoute[] = Object.values(OPERATOR_ROUTES).map(
  (route: OperatorRoute) => ({
    ...route,
    accountMustExist: route.server === 'dispatcher' && route.path.startsWith('/accounts/:id'),
    invitationLink: route === OPERATOR_ROUTES.invite,
    answer: route.publicAnswer ?? route.answer,
  }),
);

/** The operator API's answer schemas (contracts), each named once. */
export const ADMIN_ANSWER_SCHEMAS: readonly TSchema[] = [
  ...new Map(
    ADMIN_ROUTES.flatMap((route) => (route.answer ? [[route.answer.$id, route.answer]] : [])),
  ).values(),
];
