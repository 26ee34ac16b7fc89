import { randomBytes } from 'node:crypto';
import {
  OPERATOR_ROUTES as R,
  type InvitationCreateRequest,
  type InvitationCreated,
  type OperatorUserCreateRequest,
} from '@gateway/contracts';
import { arg, option, type Command } from './commands.js';
import { usageError } from './errors.js';
import { record, show } from './output.js';

/** Dashboard users: owner invitations and the platform team's operator users. */
export const DASHBOARD_COMMANDS: Record<string, Command> = {
  'invitations create': {
    usage: 'invitations create <account> <email>',
    async run(ctx) {
      const params = { id: arg(ctx, 0, 'account') };
      const request: InvitationCreateRequest = { email: arg(ctx, 1, 'email') };
      // Edge answers the invitation with its link on the public origin (the route's publicAnswer).
      const invitation = await ctx.client.call<typeof R.invite, InvitationCreated>(R.invite, {
        params,
        body: request,
      });
      // The link is shown once: hand it to the owner over a trusted channel.
      show(ctx.out, invitation, () =>
        record({ url: invitation.url, email: invitation.email, expires_at: invitation.expires_at }),
      );
    },
  },
  'operator-users create': {
    usage:
      'operator-users create <email> --role operator|finance [--password-env VAR] (else generated, shown once)',
    async run(ctx) {
      const role = option(ctx, 'role');
      if (role !== 'operator' && role !== 'finance') {
        throw usageError('--role must be operator or finance');
      }
      // Never on the command line (visible to every user of the machine): from a variable.
      const variable = option(ctx, 'password-env');
      const given = variable === undefined ? undefined : ctx.env[variable];
      if (variable !== undefined && !given) throw usageError(`${variable} is empty or not set`);
      const password = given ?? randomBytes(18).toString('base64url');
      const request: OperatorUserCreateRequest = { email: arg(ctx, 0, 'email'), role, password };
      const body = await ctx.client.call(R.createOperatorUser, { body: request });
      const user = { ...body, ...(given ? {} : { password }) };
      show(ctx.out, user, () => record(user));
    },
  },
};
