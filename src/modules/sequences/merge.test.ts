import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type MergeValues, renderMergeFields, unknownMergeFields } from './merge.ts';

const ada: MergeValues = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  full_name: 'Ada Lovelace',
  title: null,
  company_name: 'Analytical Engines',
  email: 'ada@example.test',
};

test('merge fields are filled, a fallback stands in for an empty value', () => {
  assert.equal(
    renderMergeFields('Hi {{first_name}} of {{ company_name }}, {{title|friend}}.', ada),
    'Hi Ada of Analytical Engines, friend.',
  );
  assert.equal(renderMergeFields('Hi {{first_name|there}}', { ...ada, first_name: '  ' }), 'Hi there');
  assert.equal(renderMergeFields('Hi {{title}}!', ada), 'Hi !');
});

test('unknown merge fields are named once each; known ones and plain braces are not', () => {
  assert.deepEqual(unknownMergeFields('{{first_name}} {{nickname}} {{nickname|x}} {{ phone }} {single}'), [
    'nickname',
    'phone',
  ]);
  assert.deepEqual(unknownMergeFields('{{email}} {{full_name|you}}'), []);
});
