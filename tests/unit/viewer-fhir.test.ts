import { describe, expect, it } from 'vitest';
import { isResource, summarise, type Summary } from '../../lib/view/viewer/fhir';
import { parseJson } from '../../lib/view/viewer/text';
import { treeOf } from '../../lib/view/viewer/tree';

const fact = (s: Summary, label: string) => s.facts.find((f) => f.label === label)?.value;

const potassium = {
  resourceType: 'Observation',
  id: 'k1',
  status: 'final',
  category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory', display: 'Laboratory' }] }],
  code: { coding: [{ system: 'http://loinc.org', code: '2823-3', display: 'Potassium [Moles/volume] in Serum or Plasma' }], text: 'Potassium' },
  subject: { reference: 'Patient/p1' },
  effectiveDateTime: '2024-03-05T09:30:00Z',
  valueQuantity: { value: 5.9, unit: 'mmol/L', system: 'http://unitsofmeasure.org', code: 'mmol/L' },
  interpretation: [{ coding: [{ code: 'H', display: 'High' }] }],
  referenceRange: [{ low: { value: 3.5, unit: 'mmol/L' }, high: { value: 5.1, unit: 'mmol/L' } }],
};

const patient = {
  resourceType: 'Patient',
  id: 'p1',
  identifier: [{ system: 'https://fhir.nhs.uk/Id/nhs-number', value: '9000000009' }],
  name: [{ use: 'official', family: 'Smith', given: ['Anna', 'Marie'], prefix: ['Mrs'] }],
  gender: 'female',
  birthDate: '1968-11-02',
  address: [{ line: ['1 Rose Lane'], city: 'York', postalCode: 'YO1 7HH' }],
};

const bundle = {
  resourceType: 'Bundle',
  type: 'collection',
  entry: [
    { fullUrl: 'urn:uuid:p1', resource: patient },
    { fullUrl: 'urn:uuid:k1', resource: potassium },
    {
      resource: {
        resourceType: 'DiagnosticReport',
        status: 'final',
        code: { text: 'Renal panel' },
        subject: { reference: 'Patient/p1' },
        result: [{ reference: 'Observation/k1' }, { reference: 'Observation/missing', display: 'Sodium' }],
        conclusion: 'Hyperkalaemia',
      },
    },
    { resource: { resourceType: 'MedicationRequest', status: 'active', intent: 'order', medicationCodeableConcept: { text: 'Amoxicillin 500 mg capsule' }, dosageInstruction: [{ text: '1 capsule three times a day for 7 days' }], subject: { reference: 'urn:uuid:p1' }, authoredOn: '2024-03-05' } },
    { resource: { resourceType: 'AllergyIntolerance', code: { text: 'Penicillin' }, clinicalStatus: { coding: [{ code: 'active' }] }, criticality: 'high', reaction: [{ manifestation: [{ text: 'Hives' }], severity: 'moderate' }], patient: { reference: 'Patient/p1' } } },
    { resource: { resourceType: 'Condition', code: { coding: [{ system: 'http://snomed.info/sct', code: '44054006', display: 'Type 2 diabetes mellitus' }] }, onsetDateTime: '2015-06-01', subject: { reference: 'Patient/p1' } } },
    { resource: { resourceType: 'Encounter', status: 'finished', class: { code: 'AMB', display: 'ambulatory' }, period: { start: '2024-03-05T09:00:00Z', end: '2024-03-05T09:40:00Z' } } },
    { resource: { resourceType: 'DocumentReference', status: 'current', type: { text: 'Discharge summary' }, content: [{ attachment: { contentType: 'application/pdf', url: 'Binary/1', title: 'summary.pdf' } }] } },
    { resource: { resourceType: 'Practitioner', id: 'dr', name: [{ family: 'Jones' }] } },
  ],
};

describe('FHIR summaries', () => {
  it('an Observation: test, value with unit, reference range, interpretation', () => {
    const s = summarise(potassium);
    expect(s.title).toBe('Potassium');
    expect(fact(s, 'Value')).toBe('5.9 mmol/L');
    expect(fact(s, 'Reference range')).toBe('3.5 - 5.1 mmol/L');
    expect(fact(s, 'Interpretation')).toBe('High');
    expect(fact(s, 'Status')).toBe('final');
    expect(fact(s, 'Patient')).toBe('Patient/p1');
  });

  it('an Observation with components (blood pressure)', () => {
    const s = summarise({
      resourceType: 'Observation',
      code: { text: 'Blood pressure' },
      component: [
        { code: { text: 'Systolic' }, valueQuantity: { value: 142, unit: 'mmHg' } },
        { code: { text: 'Diastolic' }, valueQuantity: { value: 91, unit: 'mmHg' } },
      ],
    });
    expect(s.tables[0]!.rows).toEqual([
      ['Systolic', '142 mmHg', '', ''],
      ['Diastolic', '91 mmHg', '', ''],
    ]);
  });

  it('a Patient: name, birth date, identifiers, address', () => {
    const s = summarise(patient);
    expect(s.title).toBe('Mrs Anna Marie Smith');
    expect(fact(s, 'Born')).toBe('1968-11-02');
    expect(fact(s, 'Address')).toContain('York');
    expect(s.tables[0]!.rows).toEqual([['https://fhir.nhs.uk/Id/nhs-number', '9000000009']]);
  });

  it('a Bundle: every entry summarised, references resolved within the bundle', () => {
    const s = summarise(bundle);
    expect(s.title).toBe('collection of 9 entries');
    expect(s.entries!.map((e) => [e.resourceType, e.title])).toEqual([
      ['Patient', 'Mrs Anna Marie Smith'],
      ['Observation', 'Potassium'],
      ['DiagnosticReport', 'Renal panel'],
      ['MedicationRequest', 'Amoxicillin 500 mg capsule'],
      ['AllergyIntolerance', 'Penicillin'],
      ['Condition', 'Type 2 diabetes mellitus'],
      ['Encounter', 'ambulatory'],
      ['DocumentReference', 'Discharge summary'],
      ['Practitioner', 'Practitioner/dr'],
    ]);
    const [, observation, report, med, allergy, condition, encounter, doc, other] = s.entries!;
    expect(fact(observation!, 'Patient')).toBe('Mrs Anna Marie Smith');
    expect(report!.tables[0]!.rows).toEqual([
      ['Potassium', '5.9 mmol/L', '3.5 - 5.1 mmol/L', 'High'],
      ['Sodium', '', '', ''],
    ]);
    expect(fact(report!, 'Conclusion')).toBe('Hyperkalaemia');
    expect(fact(med!, 'Dosage')).toBe('1 capsule three times a day for 7 days');
    expect(fact(med!, 'Patient')).toBe('Mrs Anna Marie Smith');
    expect(allergy!.tables[0]!.rows).toEqual([['Hives', 'moderate', '']]);
    expect(fact(allergy!, 'Criticality')).toBe('high');
    expect(fact(condition!, 'Onset')).toBe('2015-06-01');
    expect(fact(encounter!, 'When')).toBeTruthy();
    expect(doc!.tables[0]!.rows).toEqual([['summary.pdf', 'application/pdf', '', 'Binary/1']]);
    // No summary of its own: its fields are offered instead.
    expect(other!.raw).toMatchObject({ resourceType: 'Practitioner' });
  });

  it('a resource of unexpected shape never throws', () => {
    const odd = { resourceType: 'Observation', code: 'not a concept', valueQuantity: 'five', referenceRange: 3, subject: [1] };
    expect(() => summarise(odd)).not.toThrow();
    expect(summarise({ resourceType: 'Bundle', entry: 'x' }).entries).toEqual([]);
    expect(isResource({ resourceType: 'Patient' })).toBe(true);
    expect(isResource([{ resourceType: 'Patient' }])).toBe(false);
  });
});

describe('malformed FHIR JSON', () => {
  it('says where it breaks and what it looked like', () => {
    const cut = JSON.stringify(potassium, null, 2).slice(0, 200);
    const parsed = parseJson(cut);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.resourceType).toBe('Observation');
    expect(parsed.where).toMatch(/line \d+|ends too early/);
    const broken = parseJson('{\n  "resourceType": "Patient",\n  "name": [}\n');
    // V8 in Chromium gives a line and column; Node 20's only the token.
    expect(broken.ok || broken.where).toMatch(/line 3|^Unexpected token '}'$/);
  });
});

describe('field tree', () => {
  it('lists fields and items lazily, with their counts', () => {
    const root = treeOf('Practitioner', { resourceType: 'Practitioner', name: [{ family: 'Jones' }], active: true });
    expect(root.size).toBe('3 fields');
    const [type, name, active] = root.children!();
    expect(type).toMatchObject({ label: 'resourceType', value: 'Practitioner' });
    expect(name!.size).toBe('1 item');
    expect(name!.children!()[0]!.children!()[0]).toMatchObject({ label: 'family', value: 'Jones' });
    expect(active!.value).toBe('true');
  });
});
