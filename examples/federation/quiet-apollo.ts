/**
 * Imported first by every federation test and example: Apollo's gateway packages send telemetry
 * and probe cloud metadata addresses unless told not to, and nothing here may leave the loopback.
 */
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
process.env.METADATA_SERVER_DETECTION = 'none';
