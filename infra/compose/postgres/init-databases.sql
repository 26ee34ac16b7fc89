-- Runs once, when the compose PostgreSQL volume is created: one database and one owner role per
-- service (each service owns its data; neither can read the other's tables). Example passwords,
-- matching the DATABASE_URLs in docker-compose.yml; never reuse them outside a local demo.
CREATE ROLE billing LOGIN PASSWORD 'billing-example-password';
CREATE DATABASE billing OWNER billing;
REVOKE ALL ON DATABASE billing FROM PUBLIC;
-- billing runs as a role that owns nothing: the migrate one-shot (as `billing`) grants it exactly
-- what the service needs (services/billing/src/db/runtime-grants.ts), CONNECT included.
CREATE ROLE billing_runtime LOGIN PASSWORD 'billing-runtime-example-password';
-- The inference worker's ledger role: the migrate one-shot grants it EXECUTE on the two functions
-- that end a hold, and nothing else (services/billing/src/db/function-role-grants.ts, ADR 0070).
CREATE ROLE worker_ledger LOGIN PASSWORD 'worker-ledger-example-password';
-- Edge's admission role: EXECUTE on the API keys' admission and a key's last use, nothing else.
CREATE ROLE edge_admission LOGIN PASSWORD 'edge-admission-example-password';

CREATE ROLE dispatcher LOGIN PASSWORD 'dispatcher-example-password';
CREATE DATABASE dispatcher OWNER dispatcher;
REVOKE ALL ON DATABASE dispatcher FROM PUBLIC;
-- Likewise the dispatcher: the dispatcher-migrate one-shot (as `dispatcher`) grants it what the
-- service needs (services/dispatcher/src/db/runtime-grants.ts).
CREATE ROLE dispatcher_runtime LOGIN PASSWORD 'dispatcher-runtime-example-password';
