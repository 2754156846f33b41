/**
 * Unit tests of the pure frontend modules (formatting, sweep values, the
 * submit dialog's field rules, the plan's lines), as the JupyterLab
 * extension template runs them: jest with ts-jest, no browser (`*.spec.ts`,
 * node). Components are rendered with React Testing Library in jsdom
 * (`*.spec.tsx`, the second project), as jupyterlab-git tests its own. The
 * UI's flows are tested by Galata in ../ui-tests.
 */
const transform = {
  '^.+\\.tsx?$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }]
};
const moduleFileExtensions = ['ts', 'tsx', 'js', 'json'];

module.exports = {
  projects: [
    {
      displayName: 'pure',
      testEnvironment: 'node',
      roots: ['<rootDir>/test'],
      testRegex: '\\.spec\\.ts$',
      transform,
      moduleFileExtensions
    },
    {
      displayName: 'components',
      testEnvironment: 'jsdom',
      roots: ['<rootDir>/test'],
      testRegex: '\\.spec\\.tsx$',
      transform,
      moduleFileExtensions
    }
  ]
};
