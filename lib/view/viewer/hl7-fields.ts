// Names of the fields of the segments a lab or ADT message usually carries (HL7 v2.5), so the
// "other segments" list reads "PV1-3 Assigned patient location" instead of a bare number. A
// segment or field not here is shown by its position only.

const NAMES: Record<string, readonly string[]> = {
  MSH: ['Field separator', 'Encoding characters', 'Sending application', 'Sending facility', 'Receiving application', 'Receiving facility', 'Date/time of message', 'Security', 'Message type', 'Message control ID', 'Processing ID', 'Version ID'],
  EVN: ['Event type code', 'Recorded date/time', 'Date/time planned event', 'Event reason code', 'Operator ID', 'Event occurred'],
  PID: ['Set ID', 'Patient ID', 'Patient identifier list', 'Alternate patient ID', 'Patient name', "Mother's maiden name", 'Date/time of birth', 'Administrative sex', 'Patient alias', 'Race', 'Patient address', 'County code', 'Phone number - home', 'Phone number - business', 'Primary language', 'Marital status', 'Religion', 'Patient account number'],
  PV1: ['Set ID', 'Patient class', 'Assigned patient location', 'Admission type', 'Preadmit number', 'Prior patient location', 'Attending doctor', 'Referring doctor', 'Consulting doctor', 'Hospital service'],
  ORC: ['Order control', 'Placer order number', 'Filler order number', 'Placer group number', 'Order status', 'Response flag', 'Quantity/timing', 'Parent', 'Date/time of transaction', 'Entered by', 'Verified by', 'Ordering provider'],
  OBR: ['Set ID', 'Placer order number', 'Filler order number', 'Universal service identifier', 'Priority', 'Requested date/time', 'Observation date/time', 'Observation end date/time', 'Collection volume', 'Collector identifier', 'Specimen action code', 'Danger code', 'Relevant clinical information', 'Specimen received date/time', 'Specimen source', 'Ordering provider', 'Order callback phone number', 'Placer field 1', 'Placer field 2', 'Filler field 1', 'Filler field 2', 'Results rpt/status chng date/time', 'Charge to practice', 'Diagnostic serv sect ID', 'Result status'],
  OBX: ['Set ID', 'Value type', 'Observation identifier', 'Observation sub-ID', 'Observation value', 'Units', 'References range', 'Abnormal flags', 'Probability', 'Nature of abnormal test', 'Observation result status', 'Effective date of reference range', 'User defined access checks', 'Date/time of the observation', 'Producer ID', 'Responsible observer'],
  NTE: ['Set ID', 'Source of comment', 'Comment', 'Comment type'],
  NK1: ['Set ID', 'Name', 'Relationship', 'Address', 'Phone number'],
  AL1: ['Set ID', 'Allergen type code', 'Allergen code/mnemonic/description', 'Allergy severity code', 'Allergy reaction code', 'Identification date'],
  DG1: ['Set ID', 'Diagnosis coding method', 'Diagnosis code', 'Diagnosis description', 'Diagnosis date/time', 'Diagnosis type'],
  SPM: ['Set ID', 'Specimen ID', 'Specimen parent IDs', 'Specimen type', 'Specimen type modifier', 'Specimen additives', 'Specimen collection method', 'Specimen source site'],
  MSA: ['Acknowledgment code', 'Message control ID', 'Text message'],
  ERR: ['Error code and location', 'Error location', 'HL7 error code', 'Severity'],
};

/** "Patient name" for PID-5; null when the field is not in the table above. */
export function fieldName(segment: string, position: number): string | null {
  return NAMES[segment]?.[position - 1] ?? null;
}
