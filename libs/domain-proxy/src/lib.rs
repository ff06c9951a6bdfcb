//! `#[domain_proxy::interface]`: turns a driver domain's interface trait
//! into a cross-domain interface (docs/domains.md, "Proxies").
//!
//! On a trait `Blk`, the attribute keeps the trait as written and adds:
//! - an implementation of `Blk` for `frame::domain::Handle<D>` (any
//!   `D: Blk + Send + 'static`): each method packs its arguments, calls
//!   into the domain through `Domain::call` with a generated `fn` shim, and
//!   maps a `Fault` into the method's error type with `From`. A handle is
//!   the proxy: it implements the same trait as the domain and is itself
//!   exchangeable, so a handle to one domain can be passed to another;
//! - `type BlkProxy<D> = frame::domain::Handle<D>` to name it;
//! - a compile-time check that every argument and result crosses: it must
//!   be `Exchangeable`, or a lend of a shared-heap object (`&RRef<T>`,
//!   `&mut RRef<T>`; one per method), passed with `Domain::call_lend` or
//!   `Domain::call_lend_mut`.
//!
//! Rules on the trait (each broken rule is a compile error naming it):
//! methods only, no generics (on the trait or the methods), receivers
//! `&self` or `&mut self`, and every method returns `Result<T, E>` with
//! `E: From<Fault>`: a call that faults must have a way to say so.
//!
//! `#[interface(frame = crate)]` names the frame crate by another path
//! (frame's own tests use it).

#![forbid(unsafe_code)]

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, ItemTrait, PathArguments, ReceiverKind, ReturnType, TraitItem, Type,
};

#[proc_macro_attribute]
pub fn interface(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    let frame = match frame_path(attr.into()) {
        Ok(p) => p,
        Err(e) => return e.to_compile_error().into(),
    };
    let item: ItemTrait = match syn::parse(item) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error().into(),
    };
    match expand(&frame, &item) {
        Ok(out) => out.into(),
        Err(e) => {
            let err = e.to_compile_error();
            quote!(#item #err).into()
        }
    }
}

/// The path of the frame crate: `::frame`, or what `frame = PATH` says.
fn frame_path(attr: TokenStream) -> syn::Result<TokenStream> {
    let mut tokens = attr.into_iter();
    match tokens.next() {
        None => return Ok(quote!(::frame)),
        Some(TokenTree::Ident(i)) if i == "frame" => {}
        Some(t) => return Err(syn::Error::new(t.span(), "expected `frame = PATH`")),
    }
    match tokens.next() {
        Some(TokenTree::Punct(p)) if p.as_char() == '=' => {}
        _ => {
            return Err(syn::Error::new(
                Span::call_site(),
                "expected `frame = PATH`",
            ));
        }
    }
    let path: TokenStream = tokens.collect();
    if path.is_empty() {
        return Err(syn::Error::new(
            Span::call_site(),
            "expected `frame = PATH`",
        ));
    }
    Ok(path)
}

/// How one argument crosses.
enum Pass {
    /// Moved in: an Exchangeable value.
    Value(Type),
    /// `&RRef<T>`: lent for the call, shared.
    Lend(Type),
    /// `&mut RRef<T>`: lent for the call, exclusive.
    LendMut(Type),
}

struct Method {
    sig: syn::Signature,
    args: Vec<Pass>,
    ok: Type,
    err: Type,
}

fn expand(frame: &TokenStream, item: &ItemTrait) -> syn::Result<TokenStream> {
    if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        return Err(syn::Error::new_spanned(
            &item.generics,
            "a domain interface may not be generic",
        ));
    }
    let mut methods = Vec::new();
    for it in &item.items {
        let TraitItem::Fn(f) = it else {
            return Err(syn::Error::new_spanned(
                it,
                "a domain interface has methods only",
            ));
        };
        methods.push(method(&f.sig)?);
    }
    let name = &item.ident;
    let vis = &item.vis;
    let proxy = format_ident!("{}Proxy", name);
    let mut checks = Vec::new();
    let mut bodies = Vec::new();
    for m in &methods {
        for ty in m
            .args
            .iter()
            .filter_map(|a| match a {
                Pass::Value(t) => Some(t),
                _ => None,
            })
            .chain([&m.ok, &m.err])
        {
            checks.push(quote_spanned! {ty.span()=>
                #frame::domain::assert_exchangeable::<#ty>();
            });
        }
        bodies.push(proxy_method(frame, name, m));
    }
    let doc = format!(
        "The proxy of [`{name}`]: a handle to a domain whose root implements it \
         (`#[domain_proxy::interface]`)."
    );
    Ok(quote! {
        #item

        #[doc = #doc]
        #vis type #proxy<D> = #frame::domain::Handle<D>;

        // Every argument moved in and every result crosses the boundary.
        const _: () = { #(#checks)* };

        impl<__D: #name + ::core::marker::Send + 'static> #name for #frame::domain::Handle<__D> {
            #(#bodies)*
        }
    })
}

fn method(sig: &syn::Signature) -> syn::Result<Method> {
    if sig.constness.is_some() || sig.asyncness.is_some() || sig.abi.is_some() {
        return Err(syn::Error::new_spanned(
            sig,
            "a domain interface method is a plain `fn`",
        ));
    }
    if !matches!(sig.safety, syn::Safety::Default) {
        return Err(syn::Error::new_spanned(
            sig,
            "a domain interface method may not be unsafe",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(syn::Error::new_spanned(
            &sig.generics,
            "a domain interface method may not be generic",
        ));
    }
    match sig.receiver().map(|r| &r.kind) {
        Some(ReceiverKind::Reference(_, None, _)) => {}
        _ => {
            return Err(syn::Error::new_spanned(
                sig,
                "a domain interface method takes `&self` or `&mut self`",
            ));
        }
    }
    let mut args = Vec::new();
    for arg in sig.inputs.iter().skip(1) {
        let FnArg::Typed(pt) = arg else {
            return Err(syn::Error::new_spanned(arg, "unexpected receiver"));
        };
        let p = pass(&pt.ty)?;
        if !matches!(p, Pass::Value(_)) && args.iter().any(|a| !matches!(a, Pass::Value(_))) {
            return Err(syn::Error::new_spanned(
                &pt.ty,
                "a domain interface method lends at most one `RRef`",
            ));
        }
        args.push(p);
    }
    let (ok, err) = result_types(&sig.output).ok_or_else(|| {
        syn::Error::new_spanned(
            &sig.output,
            "a domain interface method returns `Result<T, E>` with `E: From<Fault>`",
        )
    })?;
    Ok(Method {
        sig: sig.clone(),
        args,
        ok,
        err,
    })
}

/// How an argument of type `ty` crosses.
fn pass(ty: &Type) -> syn::Result<Pass> {
    let Type::Reference(r) = ty else {
        return Ok(Pass::Value(ty.clone()));
    };
    let inner = single_arg_of(&r.elem, "RRef").ok_or_else(|| {
        syn::Error::new_spanned(
            ty,
            "only a shared-heap object (`&RRef<T>` or `&mut RRef<T>`) may be lent to a domain",
        )
    })?;
    if r.lifetime.is_some() {
        return Err(syn::Error::new_spanned(
            ty,
            "a lend lasts for the call: no named lifetime",
        ));
    }
    Ok(if r.mutability.is_some() {
        Pass::LendMut(inner)
    } else {
        Pass::Lend(inner)
    })
}

/// `T` if `ty` is a path ending in `last<T>`.
fn single_arg_of(ty: &Type, last: &str) -> Option<Type> {
    let args = path_args(ty, last)?;
    match (args.len(), args.first()?) {
        (1, GenericArgument::Type(t)) => Some(t.clone()),
        _ => None,
    }
}

fn path_args<'a>(
    ty: &'a Type,
    last: &str,
) -> Option<&'a syn::punctuated::Punctuated<GenericArgument, syn::Token![,]>> {
    let Type::Path(p) = ty else { return None };
    if p.qself.is_some() {
        return None;
    }
    let seg = p.path.segments.last()?;
    if seg.ident != last {
        return None;
    }
    match &seg.arguments {
        PathArguments::AngleBracketed(a) => Some(&a.args),
        _ => None,
    }
}

/// `(T, E)` of a `-> Result<T, E>`.
fn result_types(out: &ReturnType) -> Option<(Type, Type)> {
    let ReturnType::Type(_, ty) = out else {
        return None;
    };
    let args = path_args(ty, "Result")?;
    let mut it = args.iter();
    match (it.next(), it.next(), it.next()) {
        (Some(GenericArgument::Type(t)), Some(GenericArgument::Type(e)), None) => {
            Some((t.clone(), e.clone()))
        }
        _ => None,
    }
}

/// The proxy's implementation of one method: pack the arguments, call the
/// shim inside the domain (lending the lent object, if any), map a fault
/// into the error type.
fn proxy_method(frame: &TokenStream, trait_name: &syn::Ident, m: &Method) -> TokenStream {
    let sig = &m.sig;
    let ident = &sig.ident;
    let receiver = sig.receiver().map(|r| {
        let mutability = match &r.kind {
            ReceiverKind::Reference(_, _, m) => *m,
            _ => None,
        };
        quote!(& #mutability self)
    });
    let mut params = Vec::new();
    let mut values = Vec::new();
    let mut value_tys = Vec::new();
    let mut call_args = Vec::new();
    // (the lent argument's name, its reference type)
    let mut lend = None;
    for (i, (arg, input)) in m.args.iter().zip(sig.inputs.iter().skip(1)).enumerate() {
        let FnArg::Typed(pt) = input else { continue };
        let name = format_ident!("__a{}", i);
        let ty = &pt.ty;
        params.push(quote!(#name: #ty));
        call_args.push(quote!(#name));
        match arg {
            Pass::Value(t) => {
                values.push(name);
                value_tys.push(quote!(#t));
            }
            Pass::Lend(t) => lend = Some((name, quote!(&#frame::domain::RRef<#t>))),
            Pass::LendMut(t) => lend = Some((name, quote!(&mut #frame::domain::RRef<#t>))),
        }
    }
    let (ok, err) = (&m.ok, &m.err);
    let ret = quote!(::core::result::Result<#ok, #err>);
    let result = match &lend {
        None => quote! {
            fn shim<__D: #trait_name>(root: &mut __D, args: (#(#value_tys,)*)) -> #ret {
                let (#(#values,)*) = args;
                <__D as #trait_name>::#ident(root, #(#call_args),*)
            }
            let shim: fn(&mut __D, (#(#value_tys,)*)) -> #ret = shim::<__D>;
            self.domain().call(shim, (#(#values,)*))
        },
        Some((lent, lent_ty)) => {
            let method = if matches!(
                m.args.iter().find(|a| !matches!(a, Pass::Value(_))),
                Some(Pass::LendMut(_))
            ) {
                quote!(call_lend_mut)
            } else {
                quote!(call_lend)
            };
            quote! {
                fn shim<__D: #trait_name>(
                    root: &mut __D,
                    args: (#(#value_tys,)*),
                    #lent: #lent_ty,
                ) -> #ret {
                    let (#(#values,)*) = args;
                    <__D as #trait_name>::#ident(root, #(#call_args),*)
                }
                let shim: fn(&mut __D, (#(#value_tys,)*), #lent_ty) -> #ret = shim::<__D>;
                self.domain().#method(shim, (#(#values,)*), #lent)
            }
        }
    };
    quote! {
        fn #ident(#receiver, #(#params),*) -> #ret {
            let result = { #result };
            match result {
                ::core::result::Result::Ok(ret) => ret,
                ::core::result::Result::Err(fault) => {
                    ::core::result::Result::Err(<#err as ::core::convert::From<#frame::domain::Fault>>::from(fault))
                }
            }
        }
    }
}
