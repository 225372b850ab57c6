//! Tests of [`super::lower`] and [`super::ArgumentValidator`].

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::*;

fn openai(schema: Value) -> Lowered {
    lower(&schema, Family::OpenAi)
}

fn anthropic(schema: Value) -> Lowered {
    lower(&schema, Family::Anthropic)
}

/// Lowered for both families, which must agree; returns the schema and the notes.
fn both(schema: Value) -> (Value, Vec<String>) {
    let a = openai(schema.clone());
    let b = anthropic(schema);
    assert_eq!(a, b, "the families differ on a schema without recursion");
    (a.schema, a.notes)
}

fn has_note(notes: &[String], part: &str) -> bool {
    notes.iter().any(|note| note.contains(part))
}

// ---- 1. the root ----

#[test]
fn a_plain_object_schema_is_kept_as_is_without_notes() {
    let schema = json!({
        "type": "object",
        "description": "Search files",
        "properties": {"q": {"type": "string", "minLength": 1, "pattern": "^[a-z]+$"},
                       "n": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                       "mode": {"enum": ["a", "b"]}, "tag": {"const": "x", "format": "uuid"}},
        "required": ["q"],
        "additionalProperties": false
    });
    let lowered = openai(schema.clone());
    assert_eq!(lowered.schema, schema);
    assert!(lowered.notes.is_empty(), "{:?}", lowered.notes);
    assert_eq!(lowered.sha256, crate::jcs::hash(&schema));
    assert!(lowered.sha256.starts_with("sha256:") && lowered.sha256.len() == 71);
}

#[test]
fn a_root_with_properties_but_no_type_gets_type_object() {
    let (schema, notes) = both(json!({"properties": {"a": {"type": "string"}}, "required": ["a"]}));
    assert_eq!(schema, json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}));
    assert_eq!(notes, vec!["the root had `properties` but no `type`: added `type: object`".to_owned()]);
}

#[test]
fn roots_that_are_no_object_schema_become_an_empty_one() {
    for root in [json!(true), json!(false), json!(null), json!(3), json!("x"), json!([1, 2])] {
        let (schema, notes) = both(root.clone());
        assert_eq!(schema, json!({"type": "object", "properties": {}}), "{root}");
        assert_eq!(notes.len(), 1, "{root}: {notes:?}");
        assert!(notes[0].starts_with("the root is "), "{notes:?}");
    }
    let (schema, notes) = both(json!({}));
    assert_eq!(schema, json!({"type": "object", "properties": {}}));
    assert_eq!(
        notes,
        vec!["the root declared no `type` and no `properties`: made an object schema with no properties".to_owned()]
    );
    let (schema, notes) = both(json!({"type": "string"}));
    assert_eq!(schema, json!({"type": "object", "properties": {}}));
    assert!(has_note(&notes, "the root `type` is `\"string\"`, not `object`"), "{notes:?}");
    let (schema, _) = both(json!({"type": ["object", "null"], "properties": {}}));
    assert_eq!(schema, json!({"type": "object", "properties": {}}));
}

#[test]
fn an_object_root_without_properties_gets_empty_properties() {
    let (schema, notes) = both(json!({"type": "object"}));
    assert_eq!(schema, json!({"type": "object", "properties": {}}));
    assert_eq!(notes, vec!["the root had no `properties`: added `properties: {}`".to_owned()]);
}

// ---- 2. dialect ----

#[test]
fn draft07_definitions_are_resolved_and_inlined() {
    let (schema, notes) = both(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"a": {"$ref": "#/definitions/name"}},
        "definitions": {"name": {"type": "string", "maxLength": 8}}
    }));
    assert_eq!(schema, json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 8}}}));
    assert!(has_note(&notes, "removed `$schema` at the root"), "{notes:?}");
    assert!(has_note(&notes, "removed `definitions` at the root"), "{notes:?}");
}

#[test]
fn tuple_items_become_prefix_items() {
    let (schema, notes) = both(json!({
        "type": "object",
        "properties": {
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": false},
            "open": {"type": "array", "items": [{"type": "string"}]},
            "list": {"type": "array", "items": {"type": "string"}, "additionalItems": {"type": "number"}}
        }
    }));
    assert_eq!(
        schema["properties"],
        json!({
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"not": {}}},
            "open": {"type": "array", "prefixItems": [{"type": "string"}], "items": {}},
            "list": {"type": "array", "items": {"type": "string"}}
        })
    );
    assert!(has_note(&notes, "`/properties/pair`: tuple `items: [..]` became `prefixItems`"), "{notes:?}");
    assert!(has_note(&notes, "removed `additionalItems` at `/properties/list`"), "{notes:?}");
}

#[test]
fn draft04_exclusive_bounds_and_draft07_dependencies_are_rewritten() {
    let (schema, _) = both(json!({
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 1, "exclusiveMinimum": true,
                             "maximum": 9, "exclusiveMaximum": false}},
        "dependencies": {"a": ["b"], "c": {"required": ["d"]}}
    }));
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {"n": {"type": "number", "maximum": 9, "exclusiveMinimum": 1}},
            "dependentRequired": {"a": ["b"]},
            "dependentSchemas": {"c": {"required": ["d"]}}
        })
    );
}

// ---- 3. references ----

#[test]
fn defs_are_inlined_with_pointer_escapes() {
    let (schema, notes) = both(json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/a~1b", "description": "the a"},
            "t": {"$ref": "#/$defs/t~0x"},
            "p": {"$ref": "#/$defs/with%20space"},
            "n": {"$ref": "#node"}
        },
        "$defs": {
            "a/b": {"type": "string", "description": "generic", "examples": ["x"]},
            "t~x": {"type": "integer"},
            "with space": {"type": "boolean"},
            "anchored": {"$anchor": "node", "type": "null"}
        }
    }));
    assert_eq!(
        schema,
        json!({"type": "object", "properties": {
            "a": {"type": "string", "description": "the a"},
            "t": {"type": "integer"},
            "p": {"type": "boolean"},
            "n": {"type": "null"}
        }})
    );
    assert!(has_note(&notes, "removed `examples` at `/properties/a`"), "{notes:?}");
}

#[test]
fn a_root_ref_is_inlined() {
    let (schema, _) = both(json!({
        "$ref": "#/$defs/Args",
        "$defs": {"Args": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}
    }));
    assert_eq!(schema, json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}));
}

#[test]
fn a_ref_with_clashing_siblings_keeps_both_under_all_of() {
    let (schema, _) = both(json!({
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/s", "maxLength": 3}},
        "$defs": {"s": {"type": "string", "maxLength": 9}}
    }));
    assert_eq!(schema["properties"]["a"], json!({"allOf": [{"type": "string", "maxLength": 9}, {"maxLength": 3}]}));
}

fn tree() -> Value {
    json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/node"}},
        "required": ["root"],
        "$defs": {"node": {
            "type": "object",
            "properties": {"name": {"type": "string"},
                           "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}
        }}
    })
}

#[test]
fn recursion_is_kept_as_defs_and_ref_for_openai() {
    let lowered = openai(tree());
    let node = json!({
        "type": "object",
        "properties": {"name": {"type": "string"},
                       "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}
    });
    assert_eq!(
        lowered.schema,
        json!({
            "type": "object",
            "properties": {"root": node.clone()},
            "required": ["root"],
            "$defs": {"node": node}
        })
    );
    assert!(has_note(&lowered.notes, "recursive `$ref` `#/$defs/node` kept as `#/$defs/node`"), "{:?}", lowered.notes);
}

#[test]
fn recursion_is_unrolled_then_cut_for_anthropic() {
    let lowered = anthropic(tree());
    let cut = json!({"description": CUT_DESCRIPTION});
    let mut level = cut;
    for _ in 0..ANTHROPIC_UNROLL {
        level = json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": level}}
        });
    }
    assert_eq!(lowered.schema, json!({"type": "object", "properties": {"root": level}, "required": ["root"]}));
    assert!(!crate::jcs::canonical(&lowered.schema).contains("$ref"));
    assert!(has_note(&lowered.notes, "recursive `$ref` `#/$defs/node`: unrolled 3 levels"), "{:?}", lowered.notes);
}

#[test]
fn draft07_recursion_for_openai_is_kept_under_defs() {
    let lowered = openai(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"list": {"$ref": "#/definitions/cell"}},
        "definitions": {"cell": {"type": "object", "properties": {"next": {"$ref": "#/definitions/cell"}}}}
    }));
    let cell = json!({"type": "object", "properties": {"next": {"$ref": "#/$defs/cell"}}});
    assert_eq!(
        lowered.schema,
        json!({"type": "object", "properties": {"list": cell.clone()}, "$defs": {"cell": cell}})
    );
}

#[test]
fn mutual_recursion_for_openai_emits_each_definition_once() {
    let lowered = openai(json!({
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}
        }
    }));
    assert_eq!(
        lowered.schema,
        json!({
            "type": "object",
            "properties": {"a": {"type": "object", "properties": {"b": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}}}},
            "$defs": {"A": {"type": "object", "properties": {"b": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}}}}
        })
    );
}

#[test]
fn remote_and_unresolvable_refs_become_empty_schemas() {
    let started = Instant::now();
    let (schema, notes) = both(json!({
        "type": "object",
        "properties": {
            "r": {"$ref": "http://10.255.255.1/schema.json", "description": "remote"},
            "o": {"$ref": "other.json#/x"},
            "m": {"$ref": "#/$defs/missing"}
        }
    }));
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(schema["properties"], json!({"r": {"description": "remote"}, "o": {}, "m": {}}));
    assert!(
        has_note(
            &notes,
            "`/properties/r`: `$ref` `http://10.255.255.1/schema.json` points outside the document; never fetched"
        ),
        "{notes:?}"
    );
    assert!(has_note(&notes, "`/properties/m`: `$ref` `#/$defs/missing` does not resolve"), "{notes:?}");
}

#[test]
fn inlining_is_bounded_in_size_and_time() {
    // Each level refers to the next twice: 2^40 copies if nothing stopped it.
    let mut defs = Map::new();
    for level in 0..40 {
        let next = format!("#/$defs/d{}", level + 1);
        defs.insert(
            format!("d{level}"),
            json!({"type": "object", "description": "x".repeat(40),
                   "properties": {"left": {"$ref": next}, "right": {"$ref": next}}}),
        );
    }
    defs.insert("d40".to_owned(), json!({"type": "string"}));
    let schema = json!({"type": "object", "properties": {"top": {"$ref": "#/$defs/d0"}}, "$defs": defs});
    let started = Instant::now();
    for family in [Family::OpenAi, Family::Anthropic] {
        let lowered = lower(&schema, family);
        let size = crate::jcs::canonical(&lowered.schema).len();
        assert!(size < 2 * MAX_INLINED_BYTES, "{size}");
        assert!(
            has_note(&lowered.notes, "nested deeper than 32 levels") || has_note(&lowered.notes, "size cap of 256 KiB"),
            "{:?}",
            lowered.notes
        );
    }
    assert!(started.elapsed() < Duration::from_secs(5));
}

// ---- 4. root combinators ----

#[test]
fn root_all_of_is_merged() {
    let (schema, notes) = both(json!({
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "integer"}}, "required": ["b"], "additionalProperties": false}
        ]
    }));
    assert_eq!(
        schema,
        json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a", "b"]})
    );
    assert!(has_note(&notes, "the root `allOf` (2 object branches) merged"), "{notes:?}");
    assert!(has_note(&notes, "`additionalProperties` left out"), "{notes:?}");
}

#[test]
fn root_one_of_is_merged_into_a_union_with_a_description() {
    let (schema, notes) = both(json!({
        "type": "object",
        "description": "Get a repository.",
        "properties": {"verbose": {"type": "boolean"}},
        "oneOf": [
            {"properties": {"id": {"type": "integer"}, "kind": {"const": "id"}}, "required": ["id", "kind"]},
            {"properties": {"owner": {"type": "string"}, "name": {"type": "string"}, "kind": {"const": "name"}},
             "required": ["owner", "name", "kind"]}
        ]
    }));
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "description": "Get a repository. Provide exactly one of: `id`, `owner` + `name`.",
            "properties": {
                "verbose": {"type": "boolean"},
                "id": {"type": "integer"},
                "kind": {"anyOf": [{"const": "id"}, {"const": "name"}]},
                "owner": {"type": "string"},
                "name": {"type": "string"}
            },
            "required": ["kind"]
        })
    );
    assert!(has_note(&notes, "the root `oneOf` (2 object branches) merged"), "{notes:?}");
}

#[test]
fn root_any_of_of_required_only_branches() {
    let (schema, _) = both(json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "url": {"type": "string"}},
        "anyOf": [{"required": ["path"]}, {"required": ["url"]}, {"type": "string"}]
    }));
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "url": {"type": "string"}},
            "description": "Provide at least one of: `path`, `url`."
        })
    );
}

// ---- 5. non-portable keywords ----

#[test]
fn non_portable_keywords_are_dropped_but_property_names_are_kept() {
    let (schema, notes) = both(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/tool",
        "$comment": "c",
        "x-vendor": {"a": 1},
        "strict": true,
        "type": "object",
        "properties": {
            "x-id": {"type": "string", "x-mcp-header": "Id", "readOnly": true, "deprecated": true},
            "$id": {"type": "string", "writeOnly": true},
            "strict": {"type": "boolean", "$comment": "c2"},
            "blob": {"type": "string", "contentMediaType": "image/png", "contentEncoding": "base64",
                     "examples": ["AA=="], "$anchor": "b", "$dynamicAnchor": "d"},
            "dyn": {"$dynamicRef": "#d", "type": "string"}
        }
    }));
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "x-id": {"type": "string"},
                "$id": {"type": "string"},
                "strict": {"type": "boolean"},
                "blob": {"type": "string"},
                "dyn": {"type": "string"}
            }
        })
    );
    assert!(has_note(&notes, "removed `x-mcp-header` at `/properties/x-id`"), "{notes:?}");
    assert!(has_note(&notes, "removed `$id` at the root"), "{notes:?}");
    assert!(has_note(&notes, "removed `$comment` in 2 places, the first at the root"), "{notes:?}");
    assert!(!crate::jcs::canonical(&schema).contains("\"strict\":true"));
}

#[test]
fn kept_keywords_survive_below_the_root() {
    let inner = json!({
        "type": "object",
        "title": "T",
        "properties": {"v": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
                       "w": {"oneOf": [{"type": "integer", "multipleOf": 2}, {"allOf": [{"minimum": 0}]}]}},
        "patternProperties": {"^x": {"type": "string"}},
        "minProperties": 1,
        "uniqueItems": true,
        "default": {"x-a": 1, "$id": "k", "examples": []}
    });
    let (schema, notes) = both(json!({"type": "object", "properties": {"inner": inner.clone()}}));
    assert_eq!(schema["properties"]["inner"], inner);
    assert!(notes.is_empty(), "{notes:?}");
}

// ---- 6. known rejections ----

#[test]
fn empty_array_properties_become_an_object() {
    let (schema, notes) = both(json!({"type": "object", "properties": []}));
    assert_eq!(schema, json!({"type": "object", "properties": {}}));
    assert_eq!(notes, vec!["the root: `properties: []` became `{}`".to_owned()]);
}

#[test]
fn arrays_without_items_get_empty_items() {
    let (schema, notes) = both(json!({
        "type": "object",
        "properties": {"tags": {"type": "array"}, "maybe": {"type": ["array", "null"]}}
    }));
    assert_eq!(
        schema["properties"],
        json!({"tags": {"type": "array", "items": {}}, "maybe": {"type": ["array", "null"], "items": {}}})
    );
    assert!(has_note(&notes, "`/properties/tags`: `type: array` without `items`: added `items: {}`"), "{notes:?}");
}

#[test]
fn boolean_subschemas_become_objects_except_additional_properties() {
    let (schema, _) = both(json!({
        "type": "object",
        "properties": {"any": true, "none": false},
        "additionalProperties": true
    }));
    assert_eq!(
        schema,
        json!({"type": "object", "properties": {"any": {}, "none": {"not": {}}}, "additionalProperties": true})
    );
}

// ---- determinism, hashing, robustness ----

#[test]
fn the_same_input_gives_the_same_bytes() {
    let schema = json!({
        "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}},
        "oneOf": [{"properties": {"a": {"$ref": "#/$defs/n"}}, "required": ["a"]}, {"required": ["b"]}],
        "properties": {"b": {"type": "array"}, "x-y": {"x-z": 1}}
    });
    for family in [Family::OpenAi, Family::Anthropic] {
        let first = lower(&schema, family);
        for _ in 0..5 {
            let again = lower(&schema, family);
            assert_eq!(again.schema.to_string(), first.schema.to_string());
            assert_eq!(again.notes, first.notes);
            assert_eq!(again.sha256, first.sha256);
        }
    }
}

#[test]
fn the_hash_follows_the_lowered_schema() {
    let a = openai(json!({"type": "object", "properties": {"a": {"type": "string"}}}));
    let b = openai(json!({"type": "object", "properties": {"a": {"type": "integer"}}}));
    let a_again = openai(json!({"properties": {"a": {"type": "string"}}, "type": "object", "$comment": "same"}));
    assert_ne!(a.sha256, b.sha256);
    assert_eq!(a.sha256, a_again.sha256);
}

#[test]
fn odd_inputs_never_panic() {
    let odd = [
        json!({"$ref": "#"}),
        json!({"type": "object", "properties": {"me": {"$ref": "#"}}}),
        json!({"$ref": 5, "properties": 3, "required": "a", "type": 7, "allOf": {}, "anyOf": [1, null]}),
        json!({"type": "object", "properties": {"a": 1, "b": null, "c": "s", "d": []}}),
        json!({"oneOf": "x", "allOf": [true, 3, {"allOf": [{"allOf": [{"properties": {"q": {}}}]}]}]}),
        json!({"$ref": "#/0/1/~2/%zz/%ff"}),
        json!({"$ref": "#%"}),
        json!({"items": [1, 2], "additionalItems": "x", "dependencies": 4, "exclusiveMinimum": true}),
        json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "properties": {"p": {"$ref": "#/$defs/a"}}}),
        json!({"properties": {"a": {"type": "array", "items": {"$ref": "#/properties/a"}}}}),
        json!(1.5),
        json!([{"type": "object"}]),
    ];
    for schema in odd {
        for family in [Family::OpenAi, Family::Anthropic] {
            let lowered = lower(&schema, family);
            assert_eq!(lowered.schema["type"], "object", "{schema}");
            assert!(lowered.schema["properties"].is_object(), "{schema}");
        }
    }
}

#[test]
fn deep_nesting_is_cut_not_overflowed() {
    // Building and dropping such values recurses inside serde_json: use a large stack.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(|| {
            let mut schema = json!({"type": "string"});
            for _ in 0..5_000 {
                let mut properties = Map::new();
                properties.insert("a".to_owned(), schema);
                let mut object = Map::new();
                object.insert("type".to_owned(), json!("object"));
                object.insert("properties".to_owned(), Value::Object(properties));
                schema = Value::Object(object);
            }
            let mut data = json!(1);
            for _ in 0..5_000 {
                data = Value::Array(vec![data]);
            }
            let mut with_data = Map::new();
            with_data.insert("default".to_owned(), data);
            if let Value::Object(map) = &mut schema {
                map.insert("x".to_owned(), Value::Object(with_data.clone()));
                map.insert("default".to_owned(), with_data.remove("default").unwrap_or_default());
            }
            let started = Instant::now();
            for family in [Family::OpenAi, Family::Anthropic] {
                let lowered = lower(&schema, family);
                assert!(has_note(&lowered.notes, "nested deeper than 64 levels"), "{:?}", lowered.notes);
                assert!(has_note(&lowered.notes, "the value of `default` nests deeper than 64 levels"));
            }
            assert!(started.elapsed() < Duration::from_secs(2));
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn the_deepest_lowering_fits_a_small_thread_stack() {
    // 32 nested references, then plain nesting past the depth cap: the most recursion `lower`
    // does. Built and dropped on a large stack; lowered on a 1 MiB one (tokio's workers have 2).
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(|| {
            let mut plain = json!({"type": "string"});
            for _ in 0..200 {
                plain = json!({"type": "object", "properties": {"a": plain}});
            }
            let mut defs = Map::new();
            for level in 0..40 {
                let next = format!("#/$defs/l{}", level + 1);
                defs.insert(format!("l{level}"), json!({"type": "object", "properties": {"a": {"$ref": next}}}));
            }
            defs.insert("l40".to_owned(), plain);
            let schema = json!({"type": "object", "properties": {"top": {"$ref": "#/$defs/l0"}}, "$defs": defs});
            let schema = &schema;
            std::thread::scope(|scope| {
                for family in [Family::OpenAi, Family::Anthropic] {
                    let lowered = std::thread::Builder::new()
                        .stack_size(1 << 20)
                        .spawn_scoped(scope, move || lower(schema, family))
                        .unwrap()
                        .join()
                        .unwrap();
                    assert!(has_note(&lowered.notes, "`$ref`s nested deeper than 32 levels"), "{:?}", lowered.notes);
                }
            });
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn validators_can_be_shared_across_tasks() {
    fn shareable<T: Send + Sync>() {}
    shareable::<ArgumentValidator>();
    shareable::<Lowered>();
}

#[test]
fn notes_are_capped() {
    let mut properties = Map::new();
    for index in 0..100 {
        properties.insert(format!("p{index}"), json!({"type": "array"}));
    }
    let lowered = openai(json!({"type": "object", "properties": properties}));
    assert_eq!(lowered.notes.len(), 40);
    assert_eq!(lowered.notes[39], "… and 61 more changes");
}

// ---- validation against the original schema ----

fn original() -> Value {
    json!({
        "type": "object",
        "properties": {"q": {"type": "string"}, "n": {"type": "integer", "minimum": 1}},
        "required": ["q"],
        "additionalProperties": false
    })
}

#[test]
fn valid_arguments_pass() {
    assert_eq!(validate_arguments(&original(), &json!({"q": "x", "n": 3})), Validation::Valid);
}

#[test]
fn a_missing_required_argument_is_reported() {
    let Validation::Invalid(errors) = validate_arguments(&original(), &json!({"n": 2})) else {
        panic!("expected invalid");
    };
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("`(root)`: "), "{errors:?}");
    assert!(errors[0].contains("\"q\" is a required property"), "{errors:?}");
}

#[test]
fn a_wrong_type_is_reported_with_its_path() {
    let Validation::Invalid(errors) = validate_arguments(&original(), &json!({"q": 5, "n": "two"})) else {
        panic!("expected invalid");
    };
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors.iter().any(|e| e.starts_with("`/q`: ") && e.contains("not of type \"string\"")), "{errors:?}");
    assert!(errors.iter().any(|e| e.starts_with("`/n`: ") && e.contains("not of type \"integer\"")), "{errors:?}");
    let Validation::Invalid(errors) = validate_arguments(&original(), &json!("q=x")) else {
        panic!("expected invalid");
    };
    assert!(errors[0].contains("not of type \"object\""), "{errors:?}");
}

#[test]
fn errors_are_capped_at_five() {
    let mut properties = Map::new();
    let mut arguments = Map::new();
    for index in 0..8 {
        properties.insert(format!("p{index}"), json!({"type": "integer"}));
        arguments.insert(format!("p{index}"), json!("x"));
    }
    let schema = json!({"type": "object", "properties": properties});
    let Validation::Invalid(errors) = validate_arguments(&schema, &Value::Object(arguments)) else {
        panic!("expected invalid");
    };
    assert_eq!(errors.len(), 6, "{errors:?}");
    assert_eq!(errors[5], "… and 3 more");
}

#[test]
fn validation_uses_the_original_not_the_lowered_schema() {
    // The lowered schema drops the root oneOf; the original still demands exactly one branch.
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}]
    });
    assert!(openai(schema.clone()).schema.get("oneOf").is_none());
    let validator = ArgumentValidator::new(&schema);
    assert_eq!(validator.unusable(), None);
    assert_eq!(validator.validate(&json!({"a": "x"})), Validation::Valid);
    assert!(matches!(validator.validate(&json!({"a": "x", "b": "y"})), Validation::Invalid(_)));
    assert!(matches!(validator.validate(&json!({})), Validation::Invalid(_)));
}

#[test]
fn the_draft_comes_from_dollar_schema() {
    // Under draft-04, `exclusiveMinimum: true` makes `minimum` exclusive.
    let schema = json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 1, "exclusiveMinimum": true}}
    });
    assert!(matches!(validate_arguments(&schema, &json!({"n": 1})), Validation::Invalid(_)));
    assert_eq!(validate_arguments(&schema, &json!({"n": 2})), Validation::Valid);
    let draft7 = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"a": {"$ref": "#/definitions/s"}},
        "definitions": {"s": {"type": "string"}}
    });
    assert!(matches!(validate_arguments(&draft7, &json!({"a": 1})), Validation::Invalid(_)));
}

#[test]
fn a_remote_ref_in_the_original_is_not_fetched_and_leaves_no_evidence() {
    let started = Instant::now();
    let schema = json!({
        "type": "object",
        "properties": {"a": {"$ref": "http://10.255.255.1/schema.json"}}
    });
    let validator = ArgumentValidator::new(&schema);
    assert!(started.elapsed() < Duration::from_secs(1));
    let Validation::SchemaUnusable(reason) = validator.validate(&json!({"a": 1})) else {
        panic!("expected an unusable schema");
    };
    assert!(reason.contains("http://10.255.255.1/schema.json"), "{reason}");
    assert!(reason.contains("not fetched"), "{reason}");
    assert_eq!(validator.unusable(), Some(reason));
}

#[test]
fn schemas_that_do_not_compile_are_unusable_not_valid() {
    for schema in [
        json!({"type": "nope"}),
        json!({"$schema": "urn:custom", "type": "object"}),
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}),
    ] {
        assert!(matches!(validate_arguments(&schema, &json!({})), Validation::SchemaUnusable(_)), "{schema}");
    }
    assert_eq!(validate_arguments(&json!(true), &json!({"any": 1})), Validation::Valid);
}
