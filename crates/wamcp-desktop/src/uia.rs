//! UI Automation and MSAA through COM: the accessibility tree `see` reads
//! and the default action `click` tries before anything that needs the
//! foreground.
//!
//! Neither can be exercised under Wine (Wine 8 registers no CUIAutomation,
//! Wine 10's cannot walk a tree, and MSAA's default action is not
//! implemented in either), so this file is compiled and type-checked here
//! and verified only on Windows; the logic around it is tested with a fake
//! tree.

use crate::Direction;
use crate::accessibility::{
    Accessibility, ActError, Action, ElementId, FocusedElement, MAX_DEPTH, MAX_NODES, Node,
    Pattern, Patterns, State, control_type_name,
};
use crate::system::Windowing;
use crate::win32::Win32;
use std::ffi::c_void;
use windows::Win32::Foundation::HWND;
use windows::Win32::System::Com::{
    CLSCTX_INPROC_SERVER, COINIT_MULTITHREADED, CoCreateInstance, CoInitializeEx,
};
use windows::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
use windows::Win32::System::Variant::{VARIANT, VT_ARRAY, VT_BSTR, VT_I4};
use windows::Win32::UI::Accessibility::*;
use windows::core::{BSTR, Interface, s, w};

pub struct UiAutomation;

const OBJID_CLIENT: u32 = 0xFFFF_FFFC;

/// Each pattern with the property that says whether an element has it.
const PATTERNS: [(Pattern, UIA_PROPERTY_ID); 9] = [
    (
        Pattern::LegacyIAccessible,
        UIA_IsLegacyIAccessiblePatternAvailablePropertyId,
    ),
    (Pattern::Invoke, UIA_IsInvokePatternAvailablePropertyId),
    (Pattern::Toggle, UIA_IsTogglePatternAvailablePropertyId),
    (
        Pattern::SelectionItem,
        UIA_IsSelectionItemPatternAvailablePropertyId,
    ),
    (
        Pattern::ExpandCollapse,
        UIA_IsExpandCollapsePatternAvailablePropertyId,
    ),
    (Pattern::Value, UIA_IsValuePatternAvailablePropertyId),
    (
        Pattern::RangeValue,
        UIA_IsRangeValuePatternAvailablePropertyId,
    ),
    (Pattern::Scroll, UIA_IsScrollPatternAvailablePropertyId),
    (
        Pattern::ScrollItem,
        UIA_IsScrollItemPatternAvailablePropertyId,
    ),
];

/// What a read asks of every element, besides the pattern properties,
/// fetched in one cross-process call per element (a cache request)
/// instead of one per property: a browser's tree is hundreds of elements.
const PROPERTIES: [UIA_PROPERTY_ID; 17] = [
    UIA_RuntimeIdPropertyId,
    UIA_ProcessIdPropertyId,
    UIA_NativeWindowHandlePropertyId,
    UIA_NamePropertyId,
    UIA_ControlTypePropertyId,
    UIA_AutomationIdPropertyId,
    UIA_BoundingRectanglePropertyId,
    UIA_IsEnabledPropertyId,
    UIA_IsPasswordPropertyId,
    UIA_HasKeyboardFocusPropertyId,
    UIA_ValueValuePropertyId,
    UIA_ValueIsReadOnlyPropertyId,
    UIA_RangeValueValuePropertyId,
    UIA_RangeValueIsReadOnlyPropertyId,
    UIA_ToggleToggleStatePropertyId,
    UIA_SelectionItemIsSelectedPropertyId,
    UIA_ExpandCollapseExpandCollapseStatePropertyId,
];

/// A cached property; `None` where the element does not support it (UI
/// Automation then answers a sentinel object, which converts to nothing).
fn cached(element: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> Option<VARIANT> {
    // SAFETY: `element` is a live element built with a cache request; the
    // VARIANT comes back owned and is cleared on drop.
    unsafe { element.GetCachedPropertyValue(id).ok() }
}

fn cached_bool(element: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> Option<bool> {
    cached(element, id).and_then(|v| bool::try_from(&v).ok())
}

fn cached_i32(element: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> Option<i32> {
    cached(element, id).and_then(|v| i32::try_from(&v).ok())
}

fn cached_string(element: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> String {
    let Some(variant) = cached(element, id) else {
        return String::new();
    };
    // SAFETY: the string field is read only when the tag says the VARIANT
    // holds a BSTR, which it owns until it is dropped after this copy.
    unsafe {
        let inner = &variant.Anonymous.Anonymous;
        if inner.vt != VT_BSTR {
            return String::new();
        }
        inner.Anonymous.bstrVal.to_string()
    }
}

/// The runtime id a VARIANT holds (an array of 32-bit integers).
fn runtime_id(variant: &VARIANT) -> Vec<i32> {
    // SAFETY: the VARIANT is read only as the tag it carries says: an
    // array of VT_I4 whose SAFEARRAY, owned by the VARIANT, is checked to
    // be one-dimensional with 4-byte elements before its data is read, as
    // many elements as its bound says.
    unsafe {
        let inner = &variant.Anonymous.Anonymous;
        if inner.vt.0 != VT_ARRAY.0 | VT_I4.0 {
            return Vec::new();
        }
        let array = inner.Anonymous.parray;
        if array.is_null() || (*array).cDims != 1 || (*array).cbElements != 4 {
            return Vec::new();
        }
        let data = (*array).pvData as *const i32;
        let len = (*array).rgsabound[0].cElements as usize;
        if data.is_null() || len > MAX_RUNTIME_ID {
            return Vec::new();
        }
        std::slice::from_raw_parts(data, len).to_vec()
    }
}

/// Longest name or value kept of an element, in characters: a provider
/// may hand over any amount.
const MAX_TEXT_CHARS: usize = 1_000;
/// Longest runtime id taken as one (they are a handful of integers); a
/// longer one counts as none, so the element gets no ref.
const MAX_RUNTIME_ID: usize = 16;

fn kept(text: String) -> String {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        Some((end, _)) => text[..end].to_string(),
        None => text,
    }
}

fn element(element: &IUIAutomationElement, depth: u32, pid: u32) -> Node {
    let patterns = PATTERNS
        .iter()
        .filter(|(_, id)| cached_bool(element, *id) == Some(true))
        .fold(Patterns::default(), |set, (p, _)| set.with(*p));
    let password = cached_bool(element, UIA_IsPasswordPropertyId).unwrap_or(false);
    let value = if password {
        String::new()
    } else if patterns.has(Pattern::Value) {
        cached_string(element, UIA_ValueValuePropertyId)
    } else if patterns.has(Pattern::RangeValue) {
        cached(element, UIA_RangeValueValuePropertyId)
            .and_then(|v| f64::try_from(&v).ok())
            .map(|v| v.to_string())
            .unwrap_or_default()
    } else {
        String::new()
    };
    let read_only = [
        UIA_ValueIsReadOnlyPropertyId,
        UIA_RangeValueIsReadOnlyPropertyId,
    ]
    .iter()
    .any(|&id| cached_bool(element, id) == Some(true));
    let state = State {
        focused: cached_bool(element, UIA_HasKeyboardFocusPropertyId).unwrap_or(false),
        // ToggleState_On is 1, Off 0, Indeterminate 2 (shown as neither).
        checked: patterns
            .has(Pattern::Toggle)
            .then(|| cached_i32(element, UIA_ToggleToggleStatePropertyId))
            .flatten()
            .filter(|&t| t < 2)
            .map(|t| t == 1),
        selected: patterns
            .has(Pattern::SelectionItem)
            .then(|| cached_bool(element, UIA_SelectionItemIsSelectedPropertyId))
            .flatten(),
        // Collapsed 0, Expanded 1, PartiallyExpanded 2, LeafNode 3.
        expanded: patterns
            .has(Pattern::ExpandCollapse)
            .then(|| cached_i32(element, UIA_ExpandCollapseExpandCollapseStatePropertyId))
            .flatten()
            .filter(|&e| e < 3)
            .map(|e| e != 0),
        read_only,
    };
    // SAFETY: `element` is live and built with a cache request holding
    // these properties; each comes back owned or as an error.
    let rect = unsafe { element.CachedBoundingRectangle().unwrap_or_default() };
    Node {
        depth,
        name: kept(cached_string(element, UIA_NamePropertyId)),
        control_type: control_type_name(
            cached_i32(element, UIA_ControlTypePropertyId).unwrap_or(0),
        )
        .to_string(),
        automation_id: cached_string(element, UIA_AutomationIdPropertyId),
        rect: [rect.left, rect.top, rect.right, rect.bottom],
        enabled: cached_bool(element, UIA_IsEnabledPropertyId).unwrap_or(false),
        password,
        id: cached(element, UIA_RuntimeIdPropertyId)
            .map(|v| runtime_id(&v))
            .unwrap_or_default(),
        value: kept(value),
        state,
        patterns,
        pid,
    }
}

/// A cache request for `properties`.
fn cache_request(
    automation: &IUIAutomation,
    properties: &[UIA_PROPERTY_ID],
) -> Result<IUIAutomationCacheRequest, String> {
    // SAFETY: `automation` is live; the request comes back owned and each
    // property id is one of UI Automation's constants.
    unsafe {
        let request = automation.CreateCacheRequest().map_err(|e| e.to_string())?;
        for &id in properties {
            request.AddProperty(id).map_err(|e| e.to_string())?;
        }
        Ok(request)
    }
}

/// The process id the element's provider gives.
fn provider_pid(element: &IUIAutomationElement) -> u32 {
    cached_i32(element, UIA_ProcessIdPropertyId)
        .and_then(|p| u32::try_from(p).ok())
        .unwrap_or(0)
}

/// The process an element belongs to. UI Automation's process id comes
/// from the element's provider, so it is not the last word: an element
/// inside another process's window (the nearest window handle at or
/// above it, asked of the system) is that process's whatever it says.
fn owner(provider_pid: u32, window_owner: u32, scope: u32) -> u32 {
    if window_owner != scope {
        window_owner
    } else {
        provider_pid
    }
}

/// Walks the control view under `hwnd` depth first, at most `limit`
/// elements and `MAX_DEPTH` levels, each built with `request` (which must
/// hold the native window handle). `visit` gets each element, its depth
/// and the process of the nearest window at or above it, and returns
/// `false` to stop. Below an element whose window is another process's,
/// nothing is walked: none of it can be the window's program's.
fn walk(
    automation: &IUIAutomation,
    hwnd: isize,
    request: &IUIAutomationCacheRequest,
    limit: usize,
    visit: &mut dyn FnMut(&IUIAutomationElement, u32, u32) -> bool,
) -> Result<(), String> {
    let scope = Win32.window_pid(hwnd);
    // SAFETY: `automation`, `walker`, `request` and every element are
    // live, reference-counted interfaces owned by this frame; a stale
    // `hwnd` is refused by ElementFromHandle with an error, as window
    // handles are checked by the system, not dereferenced.
    unsafe {
        let root = automation
            .ElementFromHandle(HWND(hwnd as *mut c_void))
            .map_err(|e| format!("the window has no accessibility element: {e}"))?;
        let walker = automation.ControlViewWalker().map_err(|e| e.to_string())?;
        let mut count = 0;
        let mut stack: Vec<(IUIAutomationElement, u32, u32)> = Vec::new();
        if let Ok(first) = walker.GetFirstChildElementBuildCache(&root, request) {
            stack.push((first, 0, scope));
        }
        while let Some((current, depth, above)) = stack.pop() {
            let window_owner = match cached_i32(&current, UIA_NativeWindowHandlePropertyId) {
                Some(handle) if handle != 0 => Win32.window_pid(handle as isize),
                _ => above,
            };
            if count >= limit || !visit(&current, depth, window_owner) {
                break;
            }
            count += 1;
            if let Ok(next) = walker.GetNextSiblingElementBuildCache(&current, request) {
                stack.push((next, depth, above));
            }
            if depth + 1 < MAX_DEPTH
                && window_owner == scope
                && let Ok(child) = walker.GetFirstChildElementBuildCache(&current, request)
            {
                stack.push((child, depth + 1, window_owner));
            }
        }
        Ok(())
    }
}

/// Calls the pattern `action` goes through on `element`.
fn call(element: &IUIAutomationElement, action: &Action) -> Result<(), ActError> {
    fn get<T: Interface>(
        element: &IUIAutomationElement,
        id: UIA_PATTERN_ID,
    ) -> Result<T, ActError> {
        // SAFETY: `element` is live; the pattern interface comes back owned,
        // or an error when the element does not offer it.
        unsafe { element.GetCurrentPatternAs::<T>(id) }.map_err(|_| ActError::Unsupported)
    }
    // Errors that say the call did nothing: not supported or implemented
    // (DoDefaultAction on an element without one answers
    // DISP_E_MEMBERNOTFOUND), or not possible in the element's state.
    // Anything else may have come after the action took.
    const DID_NOTHING: [u32; 4] = [0x8004_0204, 0x8000_4001, 0x8002_0003, 0x8013_1509];
    let failed = |e: windows::core::Error| {
        if DID_NOTHING.contains(&(e.code().0 as u32)) {
            ActError::Declined(e.message())
        } else {
            ActError::Failed(e.message())
        }
    };
    // SAFETY: each pattern interface is live and owned here; the calls take
    // plain values or a BSTR that outlives the call.
    unsafe {
        match action {
            Action::DefaultAction => get::<IUIAutomationLegacyIAccessiblePattern>(
                element,
                UIA_LegacyIAccessiblePatternId,
            )?
            .DoDefaultAction(),
            Action::Invoke => {
                get::<IUIAutomationInvokePattern>(element, UIA_InvokePatternId)?.Invoke()
            }
            Action::Toggle => {
                get::<IUIAutomationTogglePattern>(element, UIA_TogglePatternId)?.Toggle()
            }
            Action::Select => {
                get::<IUIAutomationSelectionItemPattern>(element, UIA_SelectionItemPatternId)?
                    .Select()
            }
            Action::Expand => {
                get::<IUIAutomationExpandCollapsePattern>(element, UIA_ExpandCollapsePatternId)?
                    .Expand()
            }
            Action::Collapse => {
                get::<IUIAutomationExpandCollapsePattern>(element, UIA_ExpandCollapsePatternId)?
                    .Collapse()
            }
            Action::SetValue(text) => {
                get::<IUIAutomationValuePattern>(element, UIA_ValuePatternId)?
                    .SetValue(&BSTR::from(text.as_str()))
            }
            Action::SetRange(v) => {
                get::<IUIAutomationRangeValuePattern>(element, UIA_RangeValuePatternId)?
                    .SetValue(*v)
            }
            Action::ScrollIntoView => {
                get::<IUIAutomationScrollItemPattern>(element, UIA_ScrollItemPatternId)?
                    .ScrollIntoView()
            }
            Action::Scroll(direction, lines) => {
                let pattern = get::<IUIAutomationScrollPattern>(element, UIA_ScrollPatternId)?;
                let (horizontal, vertical) = match direction {
                    Direction::Up => (ScrollAmount_NoAmount, ScrollAmount_SmallDecrement),
                    Direction::Down => (ScrollAmount_NoAmount, ScrollAmount_SmallIncrement),
                    Direction::Left => (ScrollAmount_SmallDecrement, ScrollAmount_NoAmount),
                    Direction::Right => (ScrollAmount_SmallIncrement, ScrollAmount_NoAmount),
                };
                (0..*lines).try_for_each(|_| pattern.Scroll(horizontal, vertical))
            }
        }
        .map_err(failed)
    }
}

/// `REGDB_E_CLASSNOTREG` and `CLASS_E_CLASSNOTAVAILABLE`: no UI
/// Automation class registered.
const NOT_REGISTERED: [i32; 2] = [0x8004_0154_u32 as i32, 0x8004_0111_u32 as i32];

/// UI Automation's root object for this (worker) thread; `Ok(None)` only
/// under Wine, which registers none. On Windows a missing class is an
/// error like any other (a per-user registration could hide it), so the
/// checks that rely on it fail closed.
fn automation() -> Result<Option<IUIAutomation>, String> {
    // SAFETY: COM is initialised on this thread (the reserved argument is
    // None) before the object is made; CoCreateInstance returns an owned,
    // reference-counted interface or an error.
    unsafe {
        // S_FALSE (already initialised) is fine; the thread is ours.
        let _ = CoInitializeEx(None, COINIT_MULTITHREADED);
        match CoCreateInstance(&CUIAutomation, None, CLSCTX_INPROC_SERVER) {
            Ok(automation) => Ok(Some(automation)),
            Err(e) if NOT_REGISTERED.contains(&e.code().0) && under_wine() => Ok(None),
            Err(e) => Err(format!("UI Automation did not start: {e}")),
        }
    }
}

/// Wine's ntdll exports `wine_get_version`; Windows' does not.
fn under_wine() -> bool {
    // SAFETY: `w!` and `s!` are static NUL-terminated names; the module
    // handle is not reference-counted (nothing to free) and the address
    // found is only compared, never called.
    unsafe {
        GetModuleHandleW(w!("ntdll.dll"))
            .ok()
            .and_then(|ntdll| GetProcAddress(ntdll, s!("wine_get_version")))
            .is_some()
    }
}

impl Accessibility for UiAutomation {
    fn focused_element(&self) -> Result<Option<FocusedElement>, String> {
        let Some(automation) = automation()? else {
            return Ok(None);
        };
        // SAFETY: `automation` is a live interface owned here; the focused
        // element and its properties come back owned, or as errors.
        unsafe {
            let focused = automation
                .GetFocusedElement()
                .map_err(|e| format!("the focused element could not be read: {e}"))?;
            let password = focused.CurrentIsPassword().map_err(|e| {
                format!("the focused element did not say whether it is a password field: {e}")
            })?;
            let pid = focused
                .CurrentProcessId()
                .map_err(|e| format!("the focused element did not say its process: {e}"))?;
            Ok(Some(FocusedElement {
                password: password.as_bool(),
                pid: u32::try_from(pid).unwrap_or(0),
            }))
        }
    }

    fn tree(&self, hwnd: isize, found: &mut dyn FnMut(Node)) -> Result<(), String> {
        let automation = automation()?.ok_or("UI Automation is not available on this system")?;
        let mut properties = PROPERTIES.to_vec();
        properties.extend(PATTERNS.iter().map(|(_, id)| *id));
        let request = cache_request(&automation, &properties)?;
        let scope = Win32.window_pid(hwnd);
        walk(
            &automation,
            hwnd,
            &request,
            MAX_NODES,
            &mut |e, depth, window_owner| {
                found(element(
                    e,
                    depth,
                    owner(provider_pid(e), window_owner, scope),
                ));
                true
            },
        )
    }

    fn act(
        &self,
        hwnd: isize,
        wanted: &ElementId,
        action: &Action,
        still_wanted: &dyn Fn() -> bool,
    ) -> Result<(), ActError> {
        if wanted.runtime.is_empty() {
            return Err(ActError::Gone);
        }
        let automation = automation().map_err(ActError::Declined)?.ok_or_else(|| {
            ActError::Declined("UI Automation is not available on this system".into())
        })?;
        let request = cache_request(
            &automation,
            &[
                UIA_RuntimeIdPropertyId,
                UIA_ProcessIdPropertyId,
                UIA_NativeWindowHandlePropertyId,
                UIA_IsPasswordPropertyId,
            ],
        )
        .map_err(ActError::Declined)?;
        let scope = Win32.window_pid(hwnd);
        let mut target = None;
        // The ref came from a read of at most MAX_NODES in this order; a
        // few more allow for elements added above it since. The process
        // must match too: runtime ids are the providers' to choose.
        walk(
            &automation,
            hwnd,
            &request,
            4 * MAX_NODES,
            &mut |e, _, window_owner| {
                let found = cached(e, UIA_RuntimeIdPropertyId)
                    .is_some_and(|v| runtime_id(&v) == wanted.runtime)
                    && owner(provider_pid(e), window_owner, scope) == wanted.pid;
                if found {
                    target = Some(e.clone());
                }
                !found
            },
        )
        .map_err(ActError::Declined)?;
        let target = target.ok_or(ActError::Gone)?;
        // A page can turn a field into a password field after the look.
        if action.gives_value() && cached_bool(&target, UIA_IsPasswordPropertyId) != Some(false) {
            return Err(ActError::Password);
        }
        if !still_wanted() {
            return Err(ActError::Declined("the caller stopped waiting".into()));
        }
        call(&target, action)
    }
}

/// MSAA's default action on a control's client object, which does what a
/// click would without moving focus (measured on Chromium).
pub fn default_action(control: isize) -> Result<(), String> {
    // SAFETY: COM is initialised on this thread first. A stale `control` is
    // refused by the system, which checks window handles. `raw` receives an
    // IAccessible carrying one reference, checked non-null and then owned by
    // `accessible` (released once on drop). The VARIANT is given the VT_I4
    // tag and the `lVal` field that tag selects, so it is a valid I4 child id
    // (CHILDID_SELF).
    unsafe {
        let _ = CoInitializeEx(None, COINIT_MULTITHREADED);
        let mut raw: *mut c_void = std::ptr::null_mut();
        AccessibleObjectFromWindow(
            HWND(control as *mut c_void),
            OBJID_CLIENT,
            &IAccessible::IID,
            &mut raw,
        )
        .map_err(|e| e.to_string())?;
        if raw.is_null() {
            return Err("no accessible object".into());
        }
        let accessible = IAccessible::from_raw(raw);
        let mut child_self = VARIANT::default();
        (*child_self.Anonymous.Anonymous).vt = VT_I4;
        (*child_self.Anonymous.Anonymous).Anonymous.lVal = 0;
        accessible
            .accDoDefaultAction(&child_self)
            .map_err(|e| e.to_string())
    }
}
