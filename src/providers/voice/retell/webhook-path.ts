/** Where the calls module mounts Retell's call webhooks; placed calls send their events here. */
export const RETELL_WEBHOOK_PATH = '/hooks/retell';
