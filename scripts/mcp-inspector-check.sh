#!/usr/bin/env bash
# Checks the MCP endpoint with the official MCP Inspector CLI in both protocol eras (legacy
# initialize and modern 2026-07-28): starts the API on free ports, mints a key, runs tools/list and
# tools/call, stops everything. Embedded PostgreSQL in a temporary DATA_DIR unless DATABASE_URL is
# set (then a throwaway database on that server). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
exec node --import tsx test/mcp/inspector-check.ts "$@"
