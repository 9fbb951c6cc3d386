import { describe, expect, it } from 'vitest';
import { isResource, summarise, type Summary } from '../../lib/view/viewer/fhir';
import { parseJson } from '../../lib/view/viewer/text';
import { treeOf } from '../../lib/view/viewer/tree';

const fact = (s: Summary, label: string) => s.facts.find((f) => f.label === label)?.value;
const flagOf = (s: Summary, label: string) => s.facts.find((f) => f.label === label)?.flag;

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
  it('an Observation: test, value with unit and its flag, reference range, when collected', () => {
    const s = summarise(potassium);
    expect(s.title).toBe('Potassium');
    // The title names the test: not again as a fact.
    expect(s.facts.map((f) => f.label)).not.toContain('Test');
    expect(fact(s, 'Value')).toBe('5.9 mmol/L');
    expect(flagOf(s, 'Value')).toEqual({ level: 'abnormal', direction: 'high', label: 'High', symbol: '↑' });
    expect(s.flag).toEqual(flagOf(s, 'Value'));
    expect(fact(s, 'Reference range')).toBe('3.5 - 5.1 mmol/L');
    // Its words are the flag's: not said twice.
    expect(fact(s, 'Interpretation')).toBeUndefined();
    expect(fact(s, 'Status')).toBe('final');
    expect(fact(s, 'Patient')).toBe('Patient/p1');
    // A lab result's effective time is when the sample was collected.
    expect(fact(s, 'Collected')).toBeTruthy();
    expect(fact(s, 'When')).toBeUndefined();
  });

  it('an Observation flag: the interpretation code (critical), else the value against its range', () => {
    const critical = summarise({ ...potassium, valueQuantity: { value: 6.9, unit: 'mmol/L' }, interpretation: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation', code: 'HH' }] }] });
    expect(critical.flag).toMatchObject({ level: 'critical', direction: 'high', label: 'Critically high', symbol: '↑↑' });
    const low = summarise({ ...potassium, valueQuantity: { value: 3.1, unit: 'mmol/L' }, interpretation: undefined });
    expect(low.flag).toMatchObject({ level: 'abnormal', direction: 'low', label: 'Below range' });
    const inRange = summarise({ ...potassium, valueQuantity: { value: 4.0, unit: 'mmol/L' }, interpretation: undefined });
    expect(inRange.flag).toMatchObject({ level: 'normal' });
    // A range in another unit, or a value with a comparator, is not read against.
    expect(summarise({ ...potassium, valueQuantity: { value: 9, unit: 'mg/dL' }, interpretation: undefined }).flag).toBeNull();
    expect(summarise({ ...potassium, valueQuantity: { value: 9, comparator: '>', unit: 'mmol/L' }, interpretation: undefined }).flag).toBeNull();
    // The interpretation's text alone, and words that are not a code (kept as they are).
    expect(summarise({ ...potassium, interpretation: [{ text: 'Low' }] }).flag).toMatchObject({ direction: 'low' });
    const odd = summarise({ ...potassium, interpretation: [{ text: 'Haemolysed sample' }] });
    expect(odd.flag).toMatchObject({ level: 'abnormal', label: 'Above range' });
    expect(fact(odd, 'Interpretation')).toBe('Haemolysed sample');
    const oddInRange = summarise({ ...potassium, valueQuantity: { value: 4, unit: 'mmol/L' }, interpretation: [{ text: 'Haemolysed sample' }] });
    expect(oddInRange.flag).toMatchObject({ level: 'other', label: 'Haemolysed sample' });
    const oddAlone = summarise({ ...potassium, referenceRange: undefined, interpretation: [{ text: 'Haemolysed sample' }] });
    expect(oddAlone.flag).toMatchObject({ level: 'other', label: 'Haemolysed sample' });
    // Said once: as the interpretation, not also beside the value.
    expect(flagOf(oddAlone, 'Value')).toBeUndefined();
    expect(fact(oddAlone, 'Interpretation')).toBe('Haemolysed sample');
    // Entered in error: nothing stands out.
    expect(summarise({ ...potassium, status: 'entered-in-error' }).flag).toBeNull();
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
    expect(s.tables[0]!.flags).toBeUndefined();
    const high = summarise({
      resourceType: 'Observation',
      code: { text: 'Blood pressure' },
      component: [
        { code: { text: 'Systolic' }, valueQuantity: { value: 182, unit: 'mmHg' }, interpretation: [{ coding: [{ code: 'H' }] }] },
        { code: { text: 'Diastolic' }, valueQuantity: { value: 91, unit: 'mmHg' } },
      ],
    });
    expect(high.tables[0]).toMatchObject({ flagColumn: 'Interpretation', flags: [{ label: 'High' }, null] });
    expect(high.flag).toMatchObject({ label: 'High' });
  });

  it('a Patient: name, birth date, identifiers, address', () => {
    const s = summarise(patient);
    expect(s.title).toBe('Mrs Anna Marie Smith');
    expect(fact(s, 'Born')).toBe('1968-11-02');
    expect(fact(s, 'Address')).toContain('York');
    expect(s.tables[0]!.rows).toEqual([['https://fhir.nhs.uk/Id/nhs-number', '9000000009']]);
  });

  it('a Bundle: every entry summarised, what needs attention first, references resolved within the bundle', () => {
    const s = summarise(bundle);
    expect(s.title).toBe('collection of 9 entries');
    // The critical allergy, then the abnormal results (in the file's order), then the rest as they were.
    expect(s.entries!.map((e) => [e.resourceType, e.title, e.flag?.label ?? null])).toEqual([
      ['AllergyIntolerance', 'Penicillin', 'High criticality'],
      ['Observation', 'Potassium', 'High'],
      ['DiagnosticReport', 'Renal panel', 'High'],
      ['Patient', 'Mrs Anna Marie Smith', null],
      ['MedicationRequest', 'Amoxicillin 500 mg capsule', null],
      ['Condition', 'Type 2 diabetes mellitus', null],
      ['Encounter', 'ambulatory', null],
      ['DocumentReference', 'Discharge summary', null],
      ['Practitioner', 'Practitioner/dr', null],
    ]);
    // Who it is about, above the entries.
    expect(fact(s, 'Patient')).toBe('Mrs Anna Marie Smith');
    expect(fact(s, 'Needs attention')).toBe('3 entries (listed first)');
    const [allergy, observation, report, , med, condition, encounter, doc, other] = s.entries!;
    expect(fact(observation!, 'Patient')).toBe('Mrs Anna Marie Smith');
    expect(report!.tables[0]!.rows).toEqual([
      ['Potassium', '5.9 mmol/L', '3.5 - 5.1 mmol/L', 'High'],
      ['Sodium', '', '', ''],
    ]);
    expect(report!.tables[0]!.flags).toEqual([observation!.flag, null]);
    expect(fact(report!, 'Conclusion')).toBe('Hyperkalaemia');
    expect(fact(med!, 'Dosage')).toBe('1 capsule three times a day for 7 days');
    expect(fact(med!, 'Patient')).toBe('Mrs Anna Marie Smith');
    expect(allergy!.tables[0]!.rows).toEqual([['Hives', 'moderate', '']]);
    expect(fact(allergy!, 'Criticality')).toBe('');
    expect(flagOf(allergy!, 'Criticality')).toMatchObject({ level: 'critical', label: 'High criticality', symbol: '!!' });
    expect(fact(condition!, 'Onset')).toBe('2015-06-01');
    // Each summary's title once: no fact repeats it.
    for (const e of s.entries!) expect(e.facts.map((f) => f.value), e.title).not.toContain(e.title);
    expect(fact(encounter!, 'When')).toBeTruthy();
    expect(doc!.tables[0]!.rows).toEqual([['summary.pdf', 'application/pdf', '', 'Binary/1']]);
    // No summary of its own: its fields are offered instead.
    expect(other!.raw).toMatchObject({ resourceType: 'Practitioner' });
  });

  it('an allergy no longer active, refuted or of low criticality does not stand out', () => {
    const penicillin = { resourceType: 'AllergyIntolerance', code: { text: 'Penicillin' }, criticality: 'high' };
    expect(summarise(penicillin).flag).toMatchObject({ level: 'critical' });
    expect(summarise({ ...penicillin, clinicalStatus: { coding: [{ code: 'resolved' }] } }).flag).toBeNull();
    expect(summarise({ ...penicillin, verificationStatus: { coding: [{ code: 'refuted' }] } }).flag).toBeNull();
    expect(summarise({ ...penicillin, criticality: 'low' }).flag).toBeNull();
    expect(fact(summarise({ ...penicillin, criticality: 'low' }), 'Criticality')).toBe('low');
  });

  it('a Bundle keeps the file’s order when nothing needs attention', () => {
    const calm = summarise({ resourceType: 'Bundle', type: 'collection', entry: [{ resource: patient }, { resource: { ...potassium, valueQuantity: { value: 4, unit: 'mmol/L' }, interpretation: [{ coding: [{ code: 'N' }] }] } }, { resource: { resourceType: 'Condition', code: { text: 'Asthma' } } }] });
    expect(calm.entries!.map((e) => e.resourceType)).toEqual(['Patient', 'Observation', 'Condition']);
    expect(fact(calm, 'Needs attention')).toBeUndefined();
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
