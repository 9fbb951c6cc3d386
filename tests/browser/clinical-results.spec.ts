// Results read as a clinician reads them (issue 32, item 2), at 390×844 and 1280×800: an abnormal
// value marked in words and a symbol as well as colour; an HL7 lab message's results as cards on a
// phone (nothing wider than the screen, nothing cut) and a table on a wide screen, with when the
// sample was collected and no false warning for the message's final line break; a FHIR Bundle with
// its high-criticality allergy and abnormal result first, each entry titled once. Axe finds nothing.
import { expect, test, type APIRequestContext, type Locator, type Page, type TestInfo } from '@playwright/test';
import { accessibilityViolations, api, base, honouringRetryAfter, openConversation, screenshot, signIn, unique, userFor } from './helpers';

// A lab's ORU^R01 as it arrives from a file: \r\n line ends, the last one included.
const ORU = [
  'MSH|^~\\&|LABSYS|ST MARY HOSPITAL|EHR|NORTH CLINIC|20240305143000||ORU^R01|MSG00077|P|2.5.1',
  'PID|1||555123^^^STMARY^MR||DOE^JANE||19750412|F',
  'OBR|1|ORD9|FIL9|UE^Urea and electrolytes with estimated glomerular filtration rate^L|||20240305081500',
  'OBX|1|NM|2823-3^Potassium [Moles/volume] in Serum or Plasma^LN||6.9|mmol/L|3.5-5.1|HH|||F',
  'OBX|2|NM|2951-2^Sodium [Moles/volume] in Serum or Plasma^LN||128|mmol/L|135-145|L|||F',
  'OBX|3|NM|2160-0^Creatinine [Moles/volume] in Serum or Plasma^LN||142|umol/L|45-90||||P',
  'OBX|4|NM|3094-0^Urea nitrogen [Moles/volume] in Serum or Plasma^LN||5.1|mmol/L|2.5-7.8|N|||F',
  'OBX|5|ST|COMMENT^Comment^L||Sample received 3 hours after collection; potassium may be falsely raised by delayed separation.|||||F',
  '',
].join('\r\n');

const OBSERVATION = JSON.stringify({
  resourceType: 'Observation',
  status: 'final',
  category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] }],
  code: { text: 'Potassium' },
  effectiveDateTime: '2024-03-05',
  valueQuantity: { value: 5.9, unit: 'mmol/L' },
  interpretation: [{ coding: [{ code: 'H', display: 'High' }] }],
  referenceRange: [{ low: { value: 3.5, unit: 'mmol/L' }, high: { value: 5.1, unit: 'mmol/L' } }],
});

const BUNDLE = JSON.stringify({
  resourceType: 'Bundle',
  type: 'collection',
  entry: [
    { fullUrl: 'urn:uuid:p1', resource: { resourceType: 'Patient', id: 'p1', name: [{ family: 'Hughes', given: ['Amelia'] }], birthDate: '1950-01-02' } },
    { resource: { resourceType: 'Observation', status: 'final', code: { text: 'Haemoglobin' }, valueQuantity: { value: 13.1, unit: 'g/dL' }, referenceRange: [{ low: { value: 12, unit: 'g/dL' }, high: { value: 15.5, unit: 'g/dL' } }] } },
    { resource: { resourceType: 'Condition', code: { text: 'Atrial fibrillation' }, subject: { reference: 'urn:uuid:p1' } } },
    { resource: { resourceType: 'Observation', status: 'final', code: { text: 'eGFR' }, valueQuantity: { value: 38, unit: 'mL/min/1.73m2' }, interpretation: [{ coding: [{ code: 'L' }] }], referenceRange: [{ low: { value: 60, unit: 'mL/min/1.73m2' } }] } },
    { resource: { resourceType: 'AllergyIntolerance', code: { text: 'Penicillin' }, criticality: 'high', clinicalStatus: { coding: [{ code: 'active' }] }, reaction: [{ manifestation: [{ text: 'Anaphylaxis' }], severity: 'severe' }] } },
  ],
});

async function seed(request: APIRequestContext, info: TestInfo) {
  const contact = unique('results');
  const conversation = await (await api(request, info)).createConversation(contact);
  const add = async (name: string, mimeType: string, body: string) => {
    const r = await honouringRetryAfter(() =>
      request.post(`${base}/v1/files`, { headers: userFor(info).auth, multipart: { conversation_id: conversation.id, file: { name, mimeType, buffer: Buffer.from(body) } } }),
    );
    expect(r.status()).toBe(201);
  };
  await add('renal.hl7', 'x-application/hl7-v2+er7', ORU);
  await add('potassium.json', 'application/fhir+json', OBSERVATION);
  await add('summary.json', 'application/fhir+json', BUNDLE);
  return contact;
}

async function openFile(page: Page, name: string) {
  await page.getByRole('link', { name, exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name })).toBeVisible();
  await expect(page.getByText('Opening…')).toHaveCount(0);
}

async function back(page: Page) {
  await page.getByRole('link', { name: 'Back' }).click();
}

/** Every element under `root` inside the viewport's width, and none cutting its own content. */
async function expectNothingClipped(page: Page, root: Locator) {
  const width = page.viewportSize()!.width;
  const out = await root.evaluate((el, viewport) => {
    const problems: string[] = [];
    for (const node of [el, ...el.querySelectorAll('*')]) {
      const box = node.getBoundingClientRect();
      const name = `${node.tagName.toLowerCase()}.${node.className} “${(node.textContent ?? '').slice(0, 30)}”`;
      if (box.left < 0 || box.right > viewport + 0.5) problems.push(`${name} spans ${Math.round(box.left)}–${Math.round(box.right)}`);
      if (node.scrollWidth > node.clientWidth + 1 && getComputedStyle(node).display !== 'inline') problems.push(`${name} cuts its content (${node.scrollWidth} > ${node.clientWidth})`);
    }
    return problems;
  }, width);
  expect(out).toEqual([]);
}

test.describe('clinical results', () => {
  test.use({ bypassCSP: true }); // axe is injected as a script

  test('an HL7 lab message: flags in words, collection time, no false warning; cards on a phone, a table on a wide screen', async ({ page, request }, info) => {
    const contact = await seed(request, info);
    await signIn(page, info);
    await openConversation(page, contact);
    await openFile(page, 'renal.hl7');

    // The final line break is no segment: no warning, and no empty entry among the other segments.
    await expect(page.getByRole('heading', { name: /ORU\^R01 from ST MARY HOSPITAL/ })).toBeVisible();
    await expect(page.locator('.viewer-problem')).toHaveCount(0);
    await expect(page.getByText(/is not a segment/)).toHaveCount(0);
    const others = page.getByRole('region', { name: 'Other segments' }).locator('summary');
    await expect(others).toHaveText(['OBR']);
    // When the sample was taken (OBR-7), then when the message was sent.
    await expect(page.getByRole('region', { name: 'Message' })).toContainText('Collected 2024-03-05 08:15 · Sent 2024-03-05 14:30');
    await expect(page.getByText('3 of 5 results abnormal, 1 critical')).toBeVisible();

    const phone = info.project.name === 'phone';
    if (phone) {
      // One card per result: test, value and unit, flag in words (and symbol), range, status.
      const cards = page.getByRole('list', { name: 'Results' }).getByRole('listitem');
      await expect(cards).toHaveCount(5);
      await expect(page.getByRole('table')).toHaveCount(0);
      const potassium = cards.nth(0);
      await expect(potassium).toContainText('Potassium [Moles/volume] in Serum or Plasma (2823-3)');
      await expect(potassium.locator('.result-value')).toHaveText('6.9 mmol/L ↑↑ Critically high');
      await expect(potassium.locator('.result-facts')).toHaveText('Range3.5-5.1StatusFinal');
      await expect(cards.nth(1).locator('.flag')).toHaveText('↓ Low');
      // No code from the lab: read against its range, and said so.
      await expect(cards.nth(2).locator('.flag')).toHaveText('↑ Above range');
      await expect(cards.nth(2).locator('.result-facts')).toContainText('StatusPreliminary');
      await expect(cards.nth(3).locator('.flag')).toHaveText('Normal');
      await expect(cards.nth(4)).toContainText('falsely raised by delayed separation');
      // Readable at 390 px: every card, and everything in it, inside the screen, nothing cut.
      await expectNothingClipped(page, page.getByRole('list', { name: 'Results' }));
      for (const card of await cards.all()) {
        const box = (await card.boundingBox())!;
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width).toBeLessThanOrEqual(390);
      }
      const body = await page.locator('.viewer-body').evaluate((el) => [el.scrollWidth, document.documentElement.scrollWidth]);
      expect(body[0]).toBeLessThanOrEqual(390);
      expect(body[1]).toBeLessThanOrEqual(390);
    } else {
      const table = page.getByRole('table', { name: 'Results' });
      await expect(table.getByRole('columnheader')).toHaveText(['Test', 'Value', 'Unit', 'Flag', 'Reference range', 'Status']);
      await expect(table.getByRole('row').nth(1).getByRole('cell')).toHaveText(['Potassium [Moles/volume] in Serum or Plasma (2823-3)', '6.9', 'mmol/L', '↑↑ Critically high', '3.5-5.1', 'Final']);
      await expect(table.getByRole('row').nth(2).getByRole('cell').nth(3)).toHaveText('↓ Low');
      await expect(table.getByRole('row').nth(3).getByRole('cell').nth(3)).toHaveText('↑ Above range');
      // The whole table on screen at 1280 px: no sideways scrolling.
      await expectNothingClipped(page, table);
    }
    // Colour as well as words: critical filled, low and high in different colours, normal plain.
    const colours = await page.locator('.flag').evaluateAll((flags) => flags.map((f) => [f.textContent, getComputedStyle(f).color, getComputedStyle(f).backgroundColor]));
    const [critical, low, high, normal] = colours;
    expect(critical![2]).not.toBe('rgba(0, 0, 0, 0)');
    expect(low![1]).not.toBe(high![1]);
    expect(normal![2]).toBe('rgba(0, 0, 0, 0)');
    await screenshot(page, info, 'viewer-hl7-results');
    expect(await accessibilityViolations(page)).toEqual([]);
    // The flags' colours pass in the dark palette too.
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  test('a FHIR Observation marks its abnormal value; a Bundle lists what needs attention first, each entry titled once', async ({ page, request }, info) => {
    const contact = await seed(request, info);
    await signIn(page, info);
    await openConversation(page, contact);

    await openFile(page, 'potassium.json');
    const summary = page.getByRole('region', { name: /Observation: Potassium/ });
    const value = summary.getByRole('definition').filter({ hasText: '5.9 mmol/L' });
    await expect(value).toHaveText('5.9 mmol/L ↑ High');
    await expect(value.locator('.flag')).toHaveText('↑ High');
    // The value's words are the interpretation: not said twice; the test is the title, not a fact.
    await expect(summary.getByRole('term')).toHaveText(['Value', 'Reference range', 'Status', 'Collected', 'Category']);
    await screenshot(page, info, 'viewer-fhir-flag');
    expect(await accessibilityViolations(page)).toEqual([]);
    await back(page);

    await openFile(page, 'summary.json');
    await expect(page.getByRole('region', { name: /Bundle/ }).getByRole('definition').first()).toHaveText('Amelia Hughes');
    const entries = page.getByRole('list', { name: 'Entries' }).locator(':scope > li');
    // The critical allergy, then the low eGFR, then the rest in the file's order.
    await expect(entries.locator(':scope > details > summary')).toHaveText([
      'AllergyIntolerance Penicillin !! High criticality',
      'Observation eGFR ↓ Low',
      'Patient Amelia Hughes',
      'Observation Haemoglobin',
      'Condition Atrial fibrillation',
    ]);
    // Each entry's title once: in the line that opens it, not again inside.
    for (const [i, title] of ['Penicillin', 'eGFR', 'Amelia Hughes', 'Haemoglobin', 'Atrial fibrillation'].entries()) {
      const text = await entries.nth(i).innerText();
      expect(text.split(title).length - 1, title).toBe(1);
    }
    await expect(entries.nth(0).getByRole('definition').first()).toHaveText('!! High criticality');
    await expect(entries.nth(0).getByRole('table', { name: 'Reactions' })).toContainText('Anaphylaxis');
    if (info.project.name === 'phone') await expectNothingClipped(page, page.getByRole('list', { name: 'Entries' }));
    await screenshot(page, info, 'viewer-fhir-bundle');
    expect(await accessibilityViolations(page)).toEqual([]);
  });
});
