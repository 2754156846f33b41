"""A listing declared as a Page has the schema (fields, their order, descriptions) of one declared by
hand, so the listings can move to it without changing the OpenAPI document."""

from pydantic import Field

from jupyter_gpu_env.models.common import ApiModel, Page


class Item(ApiModel):
    id: str


class ByHand(ApiModel):
    items: list[Item]
    total: int = Field(description="Items matching the filter, over all pages.")
    offset: int
    limit: int
    next_offset: int | None = None


class Paged(Page[Item]):
    total: int = Field(description="Items matching the filter, over all pages.")


def test_a_page_has_the_schema_of_a_listing_declared_by_hand():
    assert {**Paged.model_json_schema(), "title": "ByHand"} == ByHand.model_json_schema()
    assert list(Paged.model_fields) == list(ByHand.model_fields)


def test_a_page_validates_like_one():
    page = Paged.model_validate(
        {"items": [{"id": "a"}], "total": 3, "offset": 0, "limit": 1, "next_offset": 1}
    )
    assert page.items == [Item(id="a")] and page.next_offset == 1
