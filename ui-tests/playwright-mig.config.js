/**
 * Galata/Playwright configuration of the MIG suite (tests-mig/): a server
 * replaying a recorded H100 MIG capture from ../shared/fixtures/gpu (beside
 * the repository). Run with `jlpm playwright test -c playwright-mig.config.js`.
 *
 * Without the fixtures no server is started and every test skips, saying why.
 */
const fs = require('fs');
const path = require('path');

const main = require('./playwright.config');

// Keep in step with jupyter_server_mig_config.py.
const port = process.env.UI_MIG_PORT || '27890';
const baseURL = `http://127.0.0.1:${port}`;
const capture = path.resolve(
  __dirname,
  '..',
  '..',
  'shared',
  'fixtures',
  'gpu',
  'nvgpuexp-capture-h100-mig-590.48.01.txt'
);
const haveFixtures = fs.existsSync(capture);

module.exports = {
  ...main,
  testDir: './tests-mig',
  outputDir: './test-results/mig',
  reporter: [
    ['list'],
    ['html', { open: 'never', outputFolder: 'playwright-report/mig' }]
  ],
  use: { ...main.use, baseURL },
  webServer: haveFixtures
    ? {
        command: 'jupyter lab --config jupyter_server_mig_config.py',
        url: `${baseURL}/lab`,
        timeout: 120 * 1000,
        reuseExistingServer: false
      }
    : undefined
};
