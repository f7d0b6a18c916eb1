import { startEmulator } from './emulator/server.ts';
import { DEMO_LICENSEES } from './emulator/seed.ts';

// Until the gateway exists, `npm start` serves the emulated reservation service alone.
const emulator = await startEmulator({ port: Number(process.env.PORT ?? 4010) });
console.log(`The gateway is not built yet: serving the reservation service emulator alone at ${emulator.url}`);
for (const l of DEMO_LICENSEES) console.log(`  licensee ${l.systemIdentifier}: key ${l.key}`);
