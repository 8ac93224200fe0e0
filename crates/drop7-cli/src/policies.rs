//! Policy names → factories. Built-in drop7 policies now; n-tuple policies join here so the
//! `drop7` library never depends on the learner.

use drop7::policy::{BUILTIN_POLICIES, PolicyFactory, builtin};

pub fn factory(name: &str) -> Result<PolicyFactory, String> {
    builtin(name)
        .ok_or_else(|| format!("unknown policy `{name}`: expected one of {BUILTIN_POLICIES}"))
}
