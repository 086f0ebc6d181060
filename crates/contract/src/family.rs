//! What each task family's answer holds: the fields of its output schema, their types in the
//! dataset format's words, and the values its enums take. The dataset's validation
//! (`inferbench_inputs::dataset`), the evaluations table's columns ([`crate::tables`]) and the
//! rubrics all read them from here.
use crate::vocab::TaskFamily;
use serde_json::{json, Value};

pub const TICKET_CATEGORIES: [&str; 4] = ["bug", "feature", "improvement", "customer_support"];
pub const TICKET_PRIORITIES: [&str; 4] = ["p0", "p1", "p2", "p3"];
pub const AGREEMENT_TYPES: [&str; 4] =
    ["saas_subscription", "software_license", "support_maintenance", "technology_services"];
/// Contract gold keys, in the order the format requires.
pub const CONTRACT_FIELDS: [&str; 10] = [
    "agreement_type",
    "effective_date",
    "initial_term_end_date",
    "auto_renews",
    "renewal_term_months",
    "non_renewal_notice_days",
    "payment_terms_days",
    "termination_for_convenience",
    "termination_notice_days",
    "security_incident_notice_hours",
];

/// The output schema each family's rows must declare; a synthetic prompt has none (an empty
/// object: no field is asked for, none is scored).
pub fn output_schema(family: TaskFamily) -> Value {
    match family {
        TaskFamily::Synthetic => json!({}),
        TaskFamily::MeetingNotesLookup => json!({"answer": "string"}),
        TaskFamily::TicketTriage => json!({"category": "enum", "priority": "enum"}),
        TaskFamily::ContractTermsExtraction => json!({
            "agreement_type": "enum", "effective_date": "string", "initial_term_end_date": "string",
            "auto_renews": "bool", "renewal_term_months": "int | null", "non_renewal_notice_days": "int | null",
            "payment_terms_days": "int | null", "termination_for_convenience": "bool",
            "termination_notice_days": "int | null", "security_incident_notice_hours": "int | null"
        }),
    }
}
