/**
 * Unit tests of the pure frontend modules (formatting, sweep values, the
 * submit dialog's field rules, the plan's lines), as the JupyterLab
 * extension template runs them: jest with ts-jest, no browser. The UI is
 * tested by Galata in ../ui-tests.
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testRegex: '\\.spec\\.ts$',
  transform: {
    '^.+\\.tsx?$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }]
  },
  moduleFileExtensions: ['ts', 'tsx', 'js', 'json']
};
