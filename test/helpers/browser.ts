// Debian's Chromium driven by playwright-core (no browser download: .ci/run
// installs the chromium package). The flags keep a headless Chromium from
// reaching for the network this machine does not have; Playwright gives each
// launch a fresh, empty profile directory of its own.
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function chromiumMissing(): string | null {
  return fs.existsSync(CHROMIUM) ? null : `${CHROMIUM} not found: apt-get install -y chromium (or set CHROMIUM_PATH)`;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
