//! UI Automation and MSAA through COM: the accessibility tree `see` reads
//! and the default action `click` tries before anything that needs the
//! foreground.
//!
//! Neither can be exercised under Wine (CUIAutomation is not registered and
//! MSAA's default action is not implemented there), so this file is
//! compiled and type-checked here and verified only on Windows; the logic
//! around it is tested with a fake tree.

use crate::accessibility::{
    Accessibility, FocusedElement, MAX_DEPTH, MAX_NODES, Node, control_type_name,
};
use std::ffi::c_void;
use windows::Win32::Foundation::HWND;
use windows::Win32::System::Com::{
    CLSCTX_INPROC_SERVER, COINIT_MULTITHREADED, CoCreateInstance, CoInitializeEx,
};
use windows::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
use windows::Win32::System::Variant::{VARIANT, VT_I4};
use windows::Win32::UI::Accessibility::{
    AccessibleObjectFromWindow, CUIAutomation, IAccessible, IUIAutomation, IUIAutomationElement,
};
use windows::core::{Interface, s, w};

pub struct UiAutomation;

const OBJID_CLIENT: u32 = 0xFFFF_FFFC;

fn element(element: &IUIAutomationElement, depth: u32) -> Node {
    // SAFETY: `element` is a live, reference-counted UI Automation element
    // borrowed for the call; each property comes back as an owned value
    // (strings freed by the `windows` crate) or an error.
    unsafe {
        let rect = element.CurrentBoundingRectangle().unwrap_or_default();
        Node {
            depth,
            name: element
                .CurrentName()
                .map(|b| b.to_string())
                .unwrap_or_default(),
            control_type: control_type_name(element.CurrentControlType().map(|t| t.0).unwrap_or(0))
                .to_string(),
            automation_id: element
                .CurrentAutomationId()
                .map(|b| b.to_string())
                .unwrap_or_default(),
            rect: [rect.left, rect.top, rect.right, rect.bottom],
            enabled: element
                .CurrentIsEnabled()
                .map(|b| b.as_bool())
                .unwrap_or(false),
            password: element
                .CurrentIsPassword()
                .map(|b| b.as_bool())
                .unwrap_or(false),
        }
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
        // SAFETY: `automation`, `walker` and every element are live,
        // reference-counted interfaces owned by this frame; a stale `hwnd` is
        // refused by ElementFromHandle with an error, as window handles are
        // checked by the system, not dereferenced.
        unsafe {
            let root = automation
                .ElementFromHandle(HWND(hwnd as *mut c_void))
                .map_err(|e| format!("the window has no accessibility element: {e}"))?;
            let walker = automation.ControlViewWalker().map_err(|e| e.to_string())?;
            let mut count = 0;
            let mut stack: Vec<(IUIAutomationElement, u32)> = Vec::new();
            if let Ok(first) = walker.GetFirstChildElement(&root) {
                stack.push((first, 0));
            }
            while let Some((current, depth)) = stack.pop() {
                if count >= MAX_NODES {
                    break;
                }
                found(element(&current, depth));
                count += 1;
                if let Ok(next) = walker.GetNextSiblingElement(&current) {
                    stack.push((next, depth));
                }
                if depth + 1 < MAX_DEPTH
                    && let Ok(child) = walker.GetFirstChildElement(&current)
                {
                    stack.push((child, depth + 1));
                }
            }
            Ok(())
        }
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
