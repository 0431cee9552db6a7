import { accountPages, signedOutPages } from './pages/account.tsx';
import { clientActivityPages } from './pages/client-activity.tsx';
import { clientPages } from './pages/clients.tsx';
import { fuelPages } from './pages/fuel.tsx';
import { keyPages } from './pages/keys.tsx';
import { overviewPages } from './pages/overview.tsx';
import { teamPages } from './pages/team.tsx';
import { webhookPages } from './pages/webhooks.tsx';
import { portalRoutes } from './routes.ts';

/** The portal, mounted under `/portal` by src/app.ts. */
export const portal = portalRoutes({
  signedOut: [signedOutPages],
  signedIn: [
    accountPages,
    overviewPages,
    clientPages,
    keyPages,
    webhookPages,
    clientActivityPages,
    fuelPages,
    teamPages,
  ],
});
